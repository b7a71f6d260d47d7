package main

// The page cache against a model: the file a writer sees and the file its disk holds,
// each a plain byte slice. Random writes, truncations, syncs and power cuts; after
// each, the cache must read as the writer's file, and after a sync the disk must
// equal it byte for byte.

import (
	"bytes"
	"io"
	"math/rand"
	"testing"
)

// memDisk is a backing file in memory.
type memDisk struct {
	data []byte
}

func (d *memDisk) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(d.data)) {
		return 0, io.EOF
	}
	n := copy(p, d.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (d *memDisk) WriteAt(p []byte, off int64) (int, error) {
	if end := off + int64(len(p)); end > int64(len(d.data)) {
		d.data = append(d.data, make([]byte, end-int64(len(d.data)))...)
	}
	return copy(d.data[off:], p), nil
}

func (d *memDisk) Truncate(size int64) error {
	if size <= int64(len(d.data)) {
		d.data = d.data[:size]
	} else {
		d.data = append(d.data, make([]byte, size-int64(len(d.data)))...)
	}
	return nil
}

// modelWrite writes p into model at off, as pwrite does.
func modelWrite(model []byte, p []byte, off int64) []byte {
	if end := off + int64(len(p)); end > int64(len(model)) {
		model = append(model, make([]byte, end-int64(len(model)))...)
	}
	copy(model[off:], p)
	return model
}

func modelTruncate(model []byte, size int64) []byte {
	if size <= int64(len(model)) {
		return model[:size]
	}
	return append(model, make([]byte, size-int64(len(model)))...)
}

func readAll(t *testing.T, c *FileCache, disk Disk) []byte {
	t.Helper()
	buf := make([]byte, c.Size()+PageSize)
	n, err := c.ReadAt(disk, buf, 0)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return buf[:n]
}

func TestCacheWriteSyncWriteCut(t *testing.T) {
	disk := &memDisk{}
	c := NewFileCache(0)
	c.WriteAt(disk, []byte("A"), 0)
	if err := c.SyncTo(disk); err != nil {
		t.Fatal(err)
	}
	c.WriteAt(disk, []byte("B"), 1)
	if got := readAll(t, c, disk); string(got) != "AB" {
		t.Fatalf("before the cut the file reads %q, want AB", got)
	}
	if c.UnsyncedBytes() != 2 || c.DirtyPages() != 1 {
		t.Fatalf("unsynced %d bytes in %d pages, want 2 in 1 (the page holds A again)", c.UnsyncedBytes(), c.DirtyPages())
	}
	c.Settle(int64(len(disk.data)))
	if got := readAll(t, c, disk); string(got) != "A" || string(disk.data) != "A" {
		t.Fatalf("after the cut the file reads %q and the disk holds %q, want A", got, disk.data)
	}
}

func TestCacheTruncationAfterSync(t *testing.T) {
	disk := &memDisk{data: bytes.Repeat([]byte("x"), 3*PageSize)}
	c := NewFileCache(int64(len(disk.data)))
	c.Truncate(10)
	c.Truncate(2 * PageSize)
	got := readAll(t, c, disk)
	want := append(bytes.Repeat([]byte("x"), 10), make([]byte, 2*PageSize-10)...)
	if !bytes.Equal(got, want) {
		t.Fatalf("a file cut to 10 bytes and grown again must read zeros past 10")
	}
	if !c.Truncated() || c.UnsyncedBytes() != 3*PageSize-10 {
		t.Fatalf("truncated %v, unsynced %d", c.Truncated(), c.UnsyncedBytes())
	}
	c.Settle(int64(len(disk.data)))
	if len(disk.data) != 3*PageSize || c.Size() != 3*PageSize {
		t.Fatalf("an unsynced truncation must leave the disk whole")
	}
}

func TestCacheSyncWritesTheFile(t *testing.T) {
	disk := &memDisk{data: bytes.Repeat([]byte("y"), 5000)}
	c := NewFileCache(5000)
	c.Truncate(100)
	c.WriteAt(disk, []byte("zz"), 7000)
	if err := c.SyncTo(disk); err != nil {
		t.Fatal(err)
	}
	want := modelWrite(modelTruncate(bytes.Repeat([]byte("y"), 100), 7000), []byte("zz"), 7000)
	if !bytes.Equal(disk.data, want) || c.Dirty() {
		t.Fatalf("after sync the disk holds %d bytes (want %d), dirty %v", len(disk.data), len(want), c.Dirty())
	}
}

// TestCacheAgainstModel runs random ops and checks the cache against the model after each.
func TestCacheAgainstModel(t *testing.T) {
	for seed := int64(1); seed <= 200; seed++ {
		rng := rand.New(rand.NewSource(seed))
		disk := &memDisk{data: randomBytes(rng, rng.Intn(3*PageSize))}
		c := NewFileCache(int64(len(disk.data)))
		model := append([]byte(nil), disk.data...)
		for step := 0; step < 60; step++ {
			switch op := rng.Intn(10); {
			case op < 5:
				p := randomBytes(rng, 1+rng.Intn(2*PageSize))
				off := int64(rng.Intn(4 * PageSize))
				c.WriteAt(disk, p, off)
				model = modelWrite(model, p, off)
			case op < 7:
				size := int64(rng.Intn(4 * PageSize))
				c.Truncate(size)
				model = modelTruncate(model, size)
			case op < 8:
				if err := c.SyncTo(disk); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(disk.data, model) {
					t.Fatalf("seed %d step %d: after sync the disk differs from the file", seed, step)
				}
			case op < 9:
				c.Settle(int64(len(disk.data)))
				model = append(model[:0:0], disk.data...)
			default:
				off := int64(rng.Intn(5 * PageSize))
				buf := make([]byte, rng.Intn(2*PageSize))
				n, _ := c.ReadAt(disk, buf, off)
				want := []byte{}
				if off < int64(len(model)) {
					want = model[off:min(int64(len(model)), off+int64(len(buf)))]
				}
				if !bytes.Equal(buf[:n], want) {
					t.Fatalf("seed %d step %d: read at %d differs", seed, step, off)
				}
			}
			if got := readAll(t, c, disk); !bytes.Equal(got, model) || c.Size() != int64(len(model)) {
				t.Fatalf("seed %d step %d: the cache reads %d bytes unlike the model's %d", seed, step, len(got), len(model))
			}
		}
	}
}

func randomBytes(rng *rand.Rand, n int) []byte {
	p := make([]byte, n)
	rng.Read(p)
	return p
}
