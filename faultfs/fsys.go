package main

// fsys.go: one mount. It knows every file that holds unsynced state, so it can sync
// them all (an orderly stop: the OS outlives its process and writes its page cache
// back) or throw them all away (a power cut), and say which files and how many bytes.

import (
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// listedFiles bounds how many files a report names, largest loss first.
const listedFiles = 20

// FS is one mounted directory over its backing directory.
type FS struct {
	Mountpoint string
	Backing    string
	server     *fuse.Server

	// gate: every change takes it shared; a power cut takes it alone and marks the
	// mount dead, after which every change fails with EIO (nothing can be written
	// once the power is off).
	gate sync.RWMutex
	dead bool

	mu    sync.Mutex // guards dirty
	dirty map[*node]struct{}

	budget  int64        // bytes of unsynced pages held before the largest files are written back
	pages   atomic.Int64 // unsynced pages held now
	pressed atomic.Int64 // bytes written back past the budget, since the mount
}

// FileReport is one file's unsynced state at a power cut or a sync.
type FileReport struct {
	Path          string `json:"path"`
	DiskSize      int64  `json:"disk_size"`
	Size          int64  `json:"size"`
	UnsyncedBytes int64  `json:"unsynced_bytes"`
	Truncated     bool   `json:"truncated,omitempty"`
}

// MountReport sums a mount's unsynced state: what a power cut threw away, or what a
// sync wrote.
type MountReport struct {
	Mount         string       `json:"mount"`
	Files         int          `json:"files"`
	UnsyncedBytes int64        `json:"unsynced_bytes"`
	Listed        []FileReport `json:"listed"`
	Unlisted      int          `json:"unlisted,omitempty"`
	// WrittenBack counts bytes written back without a sync, past the memory budget.
	WrittenBack int64 `json:"written_back_past_budget,omitempty"`
}

// Mount serves mountpoint over backing (both existing directories), holding up to
// budget bytes of unsynced pages, and returns the mount.
func Mount(mountpoint, backing string, budget int64) (*FS, error) {
	root, err := fs.NewLoopbackRoot(backing)
	if err != nil {
		return nil, err
	}
	loop := root.(*fs.LoopbackNode)
	fsys := &FS{Mountpoint: mountpoint, Backing: backing, dirty: map[*node]struct{}{}, budget: budget}
	top := &node{LoopbackNode: loop, fsys: fsys}
	loop.RootData.RootNode = top
	second := time.Second
	opts := &fs.Options{
		EntryTimeout: &second,
		AttrTimeout:  &second,
		MountOptions: fuse.MountOptions{
			// The daemon runs as root; the JVMs as another user, checked by the kernel.
			AllowOther: true,
			Options:    []string{"default_permissions"},
			FsName:     backing,
			Name:       "faultfs",
			// mount(2) itself: the node image has no fusermount.
			DirectMountStrict: true,
			// Kafka uses no xattrs; without this the kernel asks for
			// security.capability before every write.
			DisableXAttrs: true,
		},
	}
	server, err := fs.Mount(mountpoint, top, opts)
	if err != nil {
		return nil, err
	}
	fsys.server = server
	return fsys, nil
}

// enter admits one change, or refuses it with EIO after a power cut.
func (f *FS) enter() syscall.Errno {
	f.gate.RLock()
	if f.dead {
		f.gate.RUnlock()
		return syscall.EIO
	}
	return 0
}

func (f *FS) leave() { f.gate.RUnlock() }

func (f *FS) track(n *node) {
	f.mu.Lock()
	f.dirty[n] = struct{}{}
	f.mu.Unlock()
}

func (f *FS) untrack(n *node) {
	f.mu.Lock()
	delete(f.dirty, n)
	f.mu.Unlock()
}

func (f *FS) dirtyNodes() []*node {
	f.mu.Lock()
	defer f.mu.Unlock()
	nodes := make([]*node, 0, len(f.dirty))
	for n := range f.dirty {
		nodes = append(nodes, n)
	}
	return nodes
}

// visit runs fn on every file with unsynced state, with no change in flight and the
// file's lock held, and returns their state as it was before fn. With die, the mount
// is dead from then on.
func (f *FS) visit(fn func(n *node), die bool) MountReport {
	f.gate.Lock()
	defer f.gate.Unlock()
	f.dead = f.dead || die
	report := MountReport{Mount: f.Mountpoint, Listed: []FileReport{}, WrittenBack: f.pressed.Load()}
	var files []FileReport
	for _, n := range f.dirtyNodes() {
		n.mu.Lock()
		if n.state != nil {
			c := n.state.cache
			files = append(files, FileReport{
				Path:          n.Path(nil),
				DiskSize:      c.DiskSize(),
				Size:          c.Size(),
				UnsyncedBytes: c.UnsyncedBytes(),
				Truncated:     c.Truncated(),
			})
		}
		fn(n)
		n.mu.Unlock()
	}
	sort.Slice(files, func(i, j int) bool {
		if files[i].UnsyncedBytes != files[j].UnsyncedBytes {
			return files[i].UnsyncedBytes > files[j].UnsyncedBytes
		}
		return files[i].Path < files[j].Path
	})
	for i, file := range files {
		report.Files++
		report.UnsyncedBytes += file.UnsyncedBytes
		if i < listedFiles {
			report.Listed = append(report.Listed, file)
		}
	}
	report.Unlisted = max(0, len(files)-listedFiles)
	return report
}

// Status reports the unsynced state without changing it.
func (f *FS) Status() MountReport {
	return f.visit(func(*node) {}, false)
}

// SyncAll writes every file's unsynced state to its backing file, as an OS that
// outlives a process writes its page cache back. Returns what it wrote.
func (f *FS) SyncAll() MountReport {
	return f.visit(func(n *node) { n.syncLocked() }, false)
}

// Cut throws every file's unsynced state away and refuses every change from now on:
// the power is off. Returns what was lost.
func (f *FS) Cut() MountReport {
	return f.visit(func(n *node) { n.forget() }, true)
}

// FlushKernel makes the kernel send us every page it holds dirty for this mount
// (pages written through a shared mmap), so they join the files' unsynced state.
func (f *FS) FlushKernel() error {
	dir, err := os.Open(f.Mountpoint)
	if err != nil {
		return err
	}
	defer dir.Close()
	return unix.Syncfs(int(dir.Fd()))
}

// Unmount takes the mount down, lazily when something still holds it open.
func (f *FS) Unmount() error {
	if err := f.server.Unmount(); err != nil {
		return syscall.Unmount(f.Mountpoint, syscall.MNT_DETACH)
	}
	return nil
}
