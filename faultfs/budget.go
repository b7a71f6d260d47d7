package main

// budget.go: the daemon holds unsynced pages in its own memory, which counts against
// the node's memory limit. Past a budget it writes back the files holding the most
// pages, as a kernel past vm.dirty_bytes writes dirty pages back without being asked:
// that data then survives a power cut unsynced, as it could on a real machine. Every
// report says how many bytes were written back so, since the mount.

// relieve writes back the files holding the most pages until the mount holds no more
// than its budget. held is the node whose lock the caller holds; a file whose lock
// another holds is passed over.
func (f *FS) relieve(held *node) {
	tried := map[*node]bool{}
	for f.pages.Load()*PageSize > f.budget {
		victim := f.largest(tried)
		if victim == nil {
			return
		}
		tried[victim] = true
		if victim != held {
			if !victim.mu.TryLock() {
				continue
			}
		}
		if victim.state != nil {
			bytes := victim.state.cache.UnsyncedBytes()
			if victim.syncLocked() == 0 {
				f.pressed.Add(bytes)
			}
		}
		if victim != held {
			victim.mu.Unlock()
		}
	}
}

// largest returns the file holding the most pages that is not in skip, or nil.
func (f *FS) largest(skip map[*node]bool) *node {
	f.mu.Lock()
	defer f.mu.Unlock()
	var best *node
	for n := range f.dirty {
		if !skip[n] && (best == nil || n.pages.Load() > best.pages.Load()) {
			best = n
		}
	}
	return best
}
