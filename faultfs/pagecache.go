package main

// pagecache.go: what one file holds that its disk does not yet, as a kernel's page
// cache holds it: whole pages copied from the disk on first write, the file's
// logical size, and the lowest size it was truncated to since its last sync. It is
// pure logic over two small interfaces, so pagecache_test.go checks it against a
// plain byte-slice model with no FUSE at all.

import (
	"io"
	"sort"
)

// PageSize is the granularity of the cache, the page size of the kernels Kafka runs
// on: a write dirties whole pages, and a lost page is lost whole.
const PageSize = 4096

// Disk is the file as its disk holds it: read for the parts of a page a write does
// not cover, and for reads of pages no write touched.
type Disk interface {
	ReadAt(p []byte, off int64) (int, error)
}

// SyncTarget is where a sync writes the cached pages: the backing file.
type SyncTarget interface {
	WriteAt(p []byte, off int64) (int, error)
	Truncate(size int64) error
}

// FileCache holds one file's unsynced state. The zero value is not usable: NewFileCache
// takes the size the disk holds.
//
// Invariant: cut <= size. Bytes of the disk at or past cut are gone for readers (a
// truncation since the last sync removed them, or they never existed), and a page
// present in pages is the file's content over its whole span (zeros past size).
type FileCache struct {
	diskSize int64
	size     int64
	cut      int64
	pages    map[int64]*[PageSize]byte
}

// NewFileCache takes the size of the file on disk. Returns a cache that holds nothing
// yet: the file reads as its disk.
func NewFileCache(diskSize int64) *FileCache {
	return &FileCache{diskSize: diskSize, size: diskSize, cut: diskSize, pages: map[int64]*[PageSize]byte{}}
}

// Size returns the file's size as its writers see it.
func (c *FileCache) Size() int64 { return c.size }

// DiskSize returns the file's size on disk: what a power cut leaves.
func (c *FileCache) DiskSize() int64 { return c.diskSize }

// DirtyPages returns how many pages hold data the disk does not.
func (c *FileCache) DirtyPages() int { return len(c.pages) }

// Truncated reports whether the file was cut below its disk size since its last sync.
func (c *FileCache) Truncated() bool { return c.cut < c.diskSize }

// Dirty reports whether the file differs from its disk at all.
func (c *FileCache) Dirty() bool {
	return len(c.pages) > 0 || c.size != c.diskSize || c.cut != c.diskSize
}

// UnsyncedBytes returns the bytes a power cut would lose or change: the dirty pages'
// bytes within the file, plus the bytes a truncation cut off the disk's copy.
func (c *FileCache) UnsyncedBytes() int64 {
	var n int64
	for start := range c.pages {
		n += min(PageSize, max(0, c.size-start))
	}
	return n + max(0, c.diskSize-c.cut)
}

// fromDisk fills p with the file's content at off as the disk gives it: disk bytes
// below cut, zeros elsewhere.
func (c *FileCache) fromDisk(disk Disk, p []byte, off int64) error {
	clear(p)
	n := min(int64(len(p)), max(0, c.cut-off))
	if n == 0 {
		return nil
	}
	// A short read is the disk's end: the rest stays zero.
	if _, err := disk.ReadAt(p[:n], off); err != nil && err != io.EOF {
		return err
	}
	return nil
}

// page returns the cached page that starts at start, loading it from disk first.
func (c *FileCache) page(disk Disk, start int64) (*[PageSize]byte, error) {
	if pg, ok := c.pages[start]; ok {
		return pg, nil
	}
	pg := new([PageSize]byte)
	if err := c.fromDisk(disk, pg[:], start); err != nil {
		return nil, err
	}
	c.pages[start] = pg
	return pg, nil
}

// ReadAt fills p from the file at off. Returns how many bytes it filled: fewer than
// len(p) only at the end of the file.
func (c *FileCache) ReadAt(disk Disk, p []byte, off int64) (int, error) {
	n := int(min(int64(len(p)), max(0, c.size-off)))
	for done := 0; done < n; {
		pos := off + int64(done)
		start := pos - pos%PageSize
		span := min(n-done, int(start+PageSize-pos))
		if pg, ok := c.pages[start]; ok {
			copy(p[done:done+span], pg[pos-start:])
		} else if err := c.fromDisk(disk, p[done:done+span], pos); err != nil {
			return done, err
		}
		done += span
	}
	return n, nil
}

// WriteAt writes p into the cache at off, growing the file as a write does.
func (c *FileCache) WriteAt(disk Disk, p []byte, off int64) (int, error) {
	for done := 0; done < len(p); {
		pos := off + int64(done)
		start := pos - pos%PageSize
		pg, err := c.page(disk, start)
		if err != nil {
			return done, err
		}
		done += copy(pg[pos-start:], p[done:])
	}
	c.size = max(c.size, off+int64(len(p)))
	return len(p), nil
}

// Truncate sets the file's size, as ftruncate does: bytes past size are gone, and
// reads of what a later extension adds give zeros.
func (c *FileCache) Truncate(size int64) {
	if size < c.size {
		for start, pg := range c.pages {
			switch {
			case start >= size:
				delete(c.pages, start)
			case start+PageSize > size:
				clear(pg[size-start:])
			}
		}
		c.cut = min(c.cut, size)
	}
	c.size = size
}

// SyncTo writes the cached state to target, as fsync writes it to a disk: afterwards
// the disk holds the file and the cache holds nothing. On an error the cache keeps
// its state (the disk may hold part of it).
func (c *FileCache) SyncTo(target SyncTarget) error {
	if c.cut < c.diskSize {
		if err := target.Truncate(c.cut); err != nil {
			return err
		}
	}
	ends := c.cut
	starts := make([]int64, 0, len(c.pages))
	for start := range c.pages {
		starts = append(starts, start)
	}
	sort.Slice(starts, func(i, j int) bool { return starts[i] < starts[j] })
	for _, start := range starts {
		n := min(PageSize, c.size-start)
		if n <= 0 {
			continue
		}
		if _, err := target.WriteAt(c.pages[start][:n], start); err != nil {
			return err
		}
		ends = max(ends, start+n)
	}
	if ends != c.size {
		if err := target.Truncate(c.size); err != nil {
			return err
		}
	}
	c.Settle(c.size)
	return nil
}

// Settle forgets every unsynced change, leaving a cache of a disk that holds
// diskSize bytes: after a sync, or when a power cut throws the changes away.
func (c *FileCache) Settle(diskSize int64) {
	c.diskSize, c.size, c.cut = diskSize, diskSize, diskSize
	clear(c.pages)
}
