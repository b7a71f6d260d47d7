package main

// node.go: the FUSE side. A passthrough (go-fuse's loopback) whose files keep their
// data writes and truncations in a FileCache until fsync or fdatasync of that file;
// every other change (create, mkdir, rename, unlink, link, chmod, chown, utimes)
// goes to the disk at once, as lazyfs does with its underlying file system
// (dsrhaslab/lazyfs, lazyfs/src/lazyfs.cpp: lfs_rename, lfs_create). Kafka's own
// pattern (write a .tmp file, fsync it, rename it, fsync the directory) thus keeps
// what a journaling file system keeps, and file data is lost exactly as issue 36
// asks: every write and truncation since the last fsync of that file.

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// node is one file or directory of the mount.
type node struct {
	*fs.LoopbackNode
	fsys *FS
	mu   sync.Mutex
	// state is set while the file holds unsynced state (guarded by mu).
	state *dirtyState
	// pages is how many pages state holds, readable without mu (for the budget).
	pages atomic.Int64
}

// dirtyState is a file's unsynced state and the node's own descriptor of its backing
// file, through which it is synced, so a sync reaches the file after a rename.
type dirtyState struct {
	cache   *FileCache
	disk    *os.File
	changed time.Time
}

// handle is one open file: a descriptor of the backing file, opened read-write
// whatever the caller asked (the daemon runs as root, and the kernel has already
// checked the caller's access), so any handle can carry a sync.
type handle struct {
	node *node
	file *os.File
}

var (
	_ fs.NodeWrapChilder    = (*node)(nil)
	_ fs.NodeLookuper       = (*node)(nil)
	_ fs.NodeLinker         = (*node)(nil)
	_ fs.NodeOpener         = (*node)(nil)
	_ fs.NodeCreater        = (*node)(nil)
	_ fs.NodeGetattrer      = (*node)(nil)
	_ fs.NodeSetattrer      = (*node)(nil)
	_ fs.NodeFsyncer        = (*node)(nil)
	_ fs.NodeStatxer        = (*node)(nil)
	_ fs.NodeTmpfiler       = (*node)(nil)
	_ fs.NodeCopyFileRanger = (*node)(nil)
	_ fs.FileReader         = (*handle)(nil)
	_ fs.FileWriter         = (*handle)(nil)
	_ fs.FileFlusher        = (*handle)(nil)
	_ fs.FileReleaser       = (*handle)(nil)
	_ fs.FileAllocater      = (*handle)(nil)
)

// WrapChild makes every node go-fuse's loopback creates one of ours.
func (n *node) WrapChild(ctx context.Context, ops fs.InodeEmbedder) fs.InodeEmbedder {
	return &node{LoopbackNode: ops.(*fs.LoopbackNode), fsys: n.fsys}
}

// backingPath returns the node's path in the backing directory.
func (n *node) backingPath() string {
	return filepath.Join(n.RootData.Path, n.Path(n.Root()))
}

// Statx is left to GETATTR: the loopback's would report the disk's size.
func (n *node) Statx(ctx context.Context, f fs.FileHandle, flags uint32, mask uint32, out *fuse.StatxOut) syscall.Errno {
	return syscall.ENOSYS
}

// Tmpfile (O_TMPFILE) is not offered: the kernel then fails the open, and neither
// Kafka nor ZooKeeper asks for it.
func (n *node) Tmpfile(ctx context.Context, flags uint32, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	return nil, nil, 0, syscall.EOPNOTSUPP
}

// CopyFileRange is declined, so the kernel copies through READ and WRITE (and the cache).
func (n *node) CopyFileRange(ctx context.Context, fhIn fs.FileHandle, offIn uint64, out *fs.Inode, fhOut fs.FileHandle, offOut uint64, length uint64, flags uint64) (uint32, syscall.Errno) {
	return 0, syscall.EOPNOTSUPP
}

// openFlags are the flags the backing file is opened with: read-write always, and
// none of the flags that would change the disk (O_TRUNC, O_APPEND) or bypass the
// cache (O_DIRECT); the kernel has done the access check.
func openFlags(flags uint32) int {
	return syscall.O_RDWR | syscall.O_CLOEXEC | int(flags)&syscall.O_NOFOLLOW
}

// Open opens the backing file for a new handle; O_TRUNC becomes an unsynced truncation.
func (n *node) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	if errno := n.fsys.enter(); errno != 0 {
		return nil, 0, errno
	}
	defer n.fsys.leave()
	file, err := os.OpenFile(n.backingPath(), openFlags(flags), 0)
	if err != nil {
		return nil, 0, fs.ToErrno(err)
	}
	h := &handle{node: n, file: file}
	if flags&syscall.O_TRUNC != 0 {
		if errno := n.truncate(file, 0); errno != 0 {
			file.Close()
			return nil, 0, errno
		}
	}
	return h, 0, 0
}

// Create makes the file on disk at once (a new name is metadata) and opens it; its
// data, like any file's, waits for a sync.
func (n *node) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	if errno := n.fsys.enter(); errno != 0 {
		return nil, nil, 0, errno
	}
	defer n.fsys.leave()
	inode, lh, fuseFlags, errno := n.LoopbackNode.Create(ctx, name, flags&^syscall.O_TRUNC, mode, out)
	if errno != 0 {
		return nil, nil, 0, errno
	}
	// The loopback's handle is replaced by ours on a read-write descriptor.
	if r, ok := lh.(fs.FileReleaser); ok {
		r.Release(ctx)
	}
	// The new inode joins the tree only after Create returns: name it from its parent.
	child := inode.Operations().(*node)
	file, err := os.OpenFile(filepath.Join(n.backingPath(), name), openFlags(flags), 0)
	if err != nil {
		return nil, nil, 0, fs.ToErrno(err)
	}
	h := &handle{node: child, file: file}
	if flags&syscall.O_TRUNC != 0 {
		if errno := child.truncate(file, 0); errno != 0 {
			file.Close()
			return nil, nil, 0, errno
		}
	}
	return inode, h, fuseFlags, 0
}

// Getattr reports the backing file's attributes with the size writers see.
func (n *node) Getattr(ctx context.Context, f fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.getattr(ctx, out)
}

// getattr is Getattr with the node's lock held.
func (n *node) getattr(ctx context.Context, out *fuse.AttrOut) syscall.Errno {
	if n.state == nil {
		return n.LoopbackNode.Getattr(ctx, nil, out)
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(int(n.state.disk.Fd()), &st); err != nil {
		return fs.ToErrno(err)
	}
	out.FromStat(&st)
	n.patch(&out.Attr)
	return 0
}

// patch puts the size and times writers see into attributes read from the disk. The
// caller holds the node's lock.
func (n *node) patch(attr *fuse.Attr) {
	if n.state == nil {
		return
	}
	attr.Size = uint64(n.state.cache.Size())
	attr.Blocks = (attr.Size + 511) / 512
	if n.state.changed.Unix() >= int64(attr.Mtime) {
		attr.SetTimes(nil, &n.state.changed, &n.state.changed)
	}
}

// Lookup finds a child as the loopback does, with the size its writers see: the
// kernel takes a lookup's (and a directory listing's) attributes as the file's, and
// would cut reads at the disk's size. The loopback makes a fresh node that go-fuse
// swaps for the one it knows; that one, the parent's child of this name, holds the state.
func (n *node) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	child, errno := n.LoopbackNode.Lookup(ctx, name, out)
	if errno == 0 {
		if known := n.GetChild(name); known != nil && known.StableAttr().Ino == child.StableAttr().Ino {
			patchEntry(known, &out.Attr)
		}
	}
	return child, errno
}

// Link makes a second name at once, like any name, reporting the file as Lookup does.
func (n *node) Link(ctx context.Context, target fs.InodeEmbedder, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	child, errno := n.LoopbackNode.Link(ctx, target, name, out)
	if errno == 0 {
		patchEntry(target.EmbeddedInode(), &out.Attr)
	}
	return child, errno
}

// patchEntry patches attr with the state of the file inode is.
func patchEntry(inode *fs.Inode, attr *fuse.Attr) {
	if c, ok := inode.Operations().(*node); ok {
		c.mu.Lock()
		c.patch(attr)
		c.mu.Unlock()
	}
}

// Setattr applies a size change to the cache, and mode, owner and times to the disk.
func (n *node) Setattr(ctx context.Context, f fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if errno := n.fsys.enter(); errno != 0 {
		return errno
	}
	defer n.fsys.leave()
	if size, ok := in.GetSize(); ok {
		var file *os.File
		if h, ok := f.(*handle); ok {
			file = h.file
		}
		if errno := n.truncate(file, int64(size)); errno != 0 {
			return errno
		}
		in.Valid &^= fuse.FATTR_SIZE
	}
	if in.Valid&(fuse.FATTR_MODE|fuse.FATTR_UID|fuse.FATTR_GID|fuse.FATTR_ATIME|fuse.FATTR_MTIME|fuse.FATTR_ATIME_NOW|fuse.FATTR_MTIME_NOW) != 0 {
		if errno := n.LoopbackNode.Setattr(ctx, nil, in, out); errno != 0 {
			return errno
		}
	}
	return n.Getattr(ctx, nil, out)
}

// Fsync syncs the file, for fsync, fdatasync and msync(MS_SYNC) alike: each writes
// its data and its size (go-fuse asks the node before the handle).
func (n *node) Fsync(ctx context.Context, f fs.FileHandle, flags uint32) syscall.Errno {
	return n.sync()
}

// dirty returns the node's unsynced state, made on first use from file (or a fresh
// descriptor when file is nil). The caller holds the node's lock.
func (n *node) dirty(file *os.File) (*dirtyState, syscall.Errno) {
	if n.state != nil {
		return n.state, 0
	}
	var disk *os.File
	var err error
	if file != nil {
		var fd int
		if fd, err = syscall.Dup(int(file.Fd())); err == nil {
			syscall.CloseOnExec(fd)
			disk = os.NewFile(uintptr(fd), file.Name())
		}
	} else {
		disk, err = os.OpenFile(n.backingPath(), syscall.O_RDWR|syscall.O_CLOEXEC, 0)
	}
	if err != nil {
		return nil, fs.ToErrno(err)
	}
	info, err := disk.Stat()
	if err != nil {
		disk.Close()
		return nil, fs.ToErrno(err)
	}
	n.state = &dirtyState{cache: NewFileCache(info.Size()), disk: disk}
	n.fsys.track(n)
	return n.state, 0
}

// truncate cuts or grows the file in the cache.
func (n *node) truncate(file *os.File, size int64) syscall.Errno {
	n.mu.Lock()
	defer n.mu.Unlock()
	state, errno := n.dirty(file)
	if errno != 0 {
		return errno
	}
	state.cache.Truncate(size)
	state.changed = time.Now()
	n.counted()
	return 0
}

// sync writes the file's cached state to its backing file. That is what makes it
// durable here: the host never loses power, so its own page cache of the backing
// file is as good as its disk, and the host's fsync is not called (it would only
// slow the run; it decides nothing).
func (n *node) sync() syscall.Errno {
	if errno := n.fsys.enter(); errno != 0 {
		return errno
	}
	defer n.fsys.leave()
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.syncLocked()
}

// syncLocked is sync with the node's lock held. A clean file has nothing to write.
func (n *node) syncLocked() syscall.Errno {
	if n.state == nil {
		return 0
	}
	if err := n.state.cache.SyncTo(n.state.disk); err != nil {
		return fs.ToErrno(err)
	}
	n.forget()
	return 0
}

// forget drops the node's unsynced state (after a sync, or at a power cut). The
// caller holds the node's lock.
func (n *node) forget() {
	if n.state == nil {
		return
	}
	n.state.disk.Close()
	n.state = nil
	n.counted()
	n.fsys.untrack(n)
}

// counted brings the node's and the mount's page counts up to date. The caller holds
// the node's lock.
func (n *node) counted() {
	var now int64
	if n.state != nil {
		now = int64(n.state.cache.DirtyPages())
	}
	n.fsys.pages.Add(now - n.pages.Swap(now))
}

// Read reads through the cache when the file has unsynced state, else from the disk.
func (h *handle) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	n := h.node
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.state == nil {
		got, err := h.file.ReadAt(dest, off)
		if err != nil && got == 0 && !isEOF(err) {
			return nil, fs.ToErrno(err)
		}
		return fuse.ReadResultData(dest[:got]), 0
	}
	got, err := n.state.cache.ReadAt(n.state.disk, dest, off)
	if err != nil {
		return nil, fs.ToErrno(err)
	}
	return fuse.ReadResultData(dest[:got]), 0
}

// Write puts data in the cache; nothing reaches the disk before a sync.
func (h *handle) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	n := h.node
	if errno := n.fsys.enter(); errno != 0 {
		return 0, errno
	}
	defer n.fsys.leave()
	n.mu.Lock()
	defer n.mu.Unlock()
	state, errno := n.dirty(h.file)
	if errno != 0 {
		return 0, errno
	}
	got, err := state.cache.WriteAt(state.disk, data, off)
	state.changed = time.Now()
	n.counted()
	if err != nil {
		return uint32(got), fs.ToErrno(err)
	}
	n.fsys.relieve(n)
	return uint32(got), 0
}

// Flush (close) syncs nothing: closing a file does not make its data durable.
func (h *handle) Flush(ctx context.Context) syscall.Errno { return 0 }

// Release closes the handle's descriptor; the node keeps its own while dirty.
func (h *handle) Release(ctx context.Context) syscall.Errno {
	return fs.ToErrno(h.file.Close())
}

// Allocate (fallocate) is declined: posix_fallocate then writes zeros, which the
// cache holds like any write.
func (h *handle) Allocate(ctx context.Context, off uint64, size uint64, mode uint32) syscall.Errno {
	return syscall.EOPNOTSUPP
}

func isEOF(err error) bool {
	return errors.Is(err, io.EOF)
}
