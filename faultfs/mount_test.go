package main

// The layer on a real FUSE mount of this host (root and /dev/fuse needed, else
// skipped; tests/integration/test_faultfs.py runs the same cases in a node
// container through the supervisor, with a JVM as the writer). A power cut here is
// what `faultfs ctl cut` does once the node's processes are dead: flush the
// kernel's dirty pages to the layer, throw away every unsynced change, unmount.
// Power comes back as a new mount over the same backing directory.

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// rig is one backing directory and its current mount.
type rig struct {
	t       *testing.T
	dir     string
	backing string
	fsys    *FS
}

func newRig(t *testing.T) *rig {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting FUSE needs root")
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skip("no /dev/fuse")
	}
	base := t.TempDir()
	r := &rig{t: t, dir: filepath.Join(base, "data"), backing: filepath.Join(base, "data"+BackingSuffix)}
	for _, d := range []string{r.dir, r.backing} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	r.mount()
	t.Cleanup(func() {
		if r.fsys != nil {
			_ = r.fsys.Unmount()
		}
	})
	return r
}

func (r *rig) mount() {
	r.mountWith(1 << 30)
}

func (r *rig) mountWith(budget int64) {
	fsys, err := Mount(r.dir, r.backing, budget)
	if err != nil {
		r.t.Fatalf("mount: %v", err)
	}
	r.fsys = fsys
}

// powerCut loses every unsynced change, unmounts and mounts again. Returns what was lost.
func (r *rig) powerCut() MountReport {
	r.t.Helper()
	if err := r.fsys.FlushKernel(); err != nil {
		r.t.Fatalf("syncfs: %v", err)
	}
	lost := r.fsys.Cut()
	if err := r.fsys.Unmount(); err != nil {
		r.t.Fatalf("unmount: %v", err)
	}
	r.mount()
	return lost
}

func (r *rig) path(name string) string { return filepath.Join(r.dir, name) }

func (r *rig) read(name string) string {
	r.t.Helper()
	data, err := os.ReadFile(r.path(name))
	if err != nil {
		r.t.Fatalf("read %s: %v", name, err)
	}
	return string(data)
}

func (r *rig) onDisk(name string) string {
	r.t.Helper()
	data, err := os.ReadFile(filepath.Join(r.backing, name))
	if err != nil {
		r.t.Fatalf("read backing %s: %v", name, err)
	}
	return string(data)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestSyncedWriteSurvivesUnsyncedIsLost(t *testing.T) {
	r := newRig(t)
	f, err := os.OpenFile(r.path("log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	must(t, err)
	_, err = f.WriteString("A")
	must(t, err)
	must(t, f.Sync())
	_, err = f.WriteString("B")
	must(t, err)
	must(t, f.Close())
	// Read through the mount: the kernel now caches "AB" for this file.
	if got := r.read("log"); got != "AB" {
		t.Fatalf("before the cut the file reads %q, want AB", got)
	}
	if got := r.onDisk("log"); got != "A" {
		t.Fatalf("the disk holds %q before the cut, want A: B must never reach it", got)
	}
	lost := r.powerCut()
	if got := r.read("log"); got != "A" {
		t.Fatalf("after the cut the file reads %q, want A", got)
	}
	if lost.Files != 1 || lost.UnsyncedBytes != 2 || lost.Listed[0].Path != "log" {
		t.Fatalf("the cut reports %+v, want log's one page of 2 bytes", lost)
	}
}

func TestFdatasyncIsASync(t *testing.T) {
	r := newRig(t)
	f, err := os.Create(r.path("seg"))
	must(t, err)
	_, err = f.Write(bytes.Repeat([]byte("x"), 10000))
	must(t, err)
	must(t, unix.Fdatasync(int(f.Fd())))
	_, err = f.WriteAt([]byte("yy"), 20000)
	must(t, err)
	must(t, f.Close())
	r.powerCut()
	if got := r.read("seg"); got != string(bytes.Repeat([]byte("x"), 10000)) {
		t.Fatalf("after the cut the file has %d bytes, want the 10000 fdatasynced", len(got))
	}
}

func TestTruncationAfterSyncIsLost(t *testing.T) {
	r := newRig(t)
	must(t, os.WriteFile(r.path("idx"), []byte("0123456789"), 0o644))
	f, err := os.OpenFile(r.path("idx"), os.O_RDWR, 0)
	must(t, err)
	must(t, f.Sync())
	must(t, f.Truncate(3))
	must(t, f.Close())
	// O_TRUNC too is a truncation that waits for a sync.
	must(t, os.WriteFile(r.path("idx2"), []byte("abc"), 0o644))
	syncFile(t, r.path("idx2"))
	must(t, os.WriteFile(r.path("idx2"), []byte("z"), 0o644))
	if r.read("idx") != "012" || r.read("idx2") != "z" {
		t.Fatalf("before the cut: %q %q", r.read("idx"), r.read("idx2"))
	}
	r.powerCut()
	if got := r.read("idx"); got != "0123456789" {
		t.Fatalf("an unsynced truncation survived the cut: %q", got)
	}
	if got := r.read("idx2"); got != "abc" {
		t.Fatalf("an unsynced O_TRUNC rewrite survived the cut: %q", got)
	}
}

func syncFile(t *testing.T, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDONLY, 0)
	must(t, err)
	defer f.Close()
	must(t, f.Sync())
}

// Kafka's index files are shared, writable mappings (MappedByteBuffer), synced by
// msync (MappedByteBuffer.force): the kernel writes the dirty pages to the layer,
// then sends FSYNC. A page written through the mapping and not synced is lost.
func TestSharedMmapMsyncReachesTheSyncPath(t *testing.T) {
	r := newRig(t)
	f, err := os.Create(r.path("00.index"))
	must(t, err)
	must(t, f.Truncate(2*PageSize))
	must(t, f.Sync())
	mem, err := unix.Mmap(int(f.Fd()), 0, 2*PageSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	must(t, err)
	copy(mem[0:], "synced")
	must(t, unix.Msync(mem, unix.MS_SYNC))
	copy(mem[PageSize:], "unsynced")
	must(t, unix.Munmap(mem))
	must(t, f.Close())
	if got := r.onDisk("00.index"); got[:6] != "synced" || got[PageSize:PageSize+8] == "unsynced" {
		t.Fatalf("the disk must hold the msynced page and not the other")
	}
	r.powerCut()
	got := r.read("00.index")
	if len(got) != 2*PageSize || got[:6] != "synced" {
		t.Fatalf("the msynced page was lost (%d bytes)", len(got))
	}
	if got[PageSize:PageSize+8] != "\x00\x00\x00\x00\x00\x00\x00\x00" {
		t.Fatalf("a page written through the mapping and never synced survived: %q", got[PageSize:PageSize+8])
	}
}

// Names are metadata and reach the disk at once; data waits for its file's sync.
func TestNamesAreKeptDataWaitsForSync(t *testing.T) {
	r := newRig(t)
	must(t, os.Mkdir(r.path("topic-0"), 0o755))
	// Kafka's checkpoint: write a .tmp file, fsync it, rename it over the old one.
	must(t, os.WriteFile(r.path("topic-0/cp.tmp"), []byte("offsets 7"), 0o644))
	syncFile(t, r.path("topic-0/cp.tmp"))
	must(t, os.Rename(r.path("topic-0/cp.tmp"), r.path("topic-0/cp")))
	// The same without the fsync: the name moves, the data is lost.
	must(t, os.WriteFile(r.path("topic-0/careless.tmp"), []byte("offsets 9"), 0o644))
	must(t, os.Rename(r.path("topic-0/careless.tmp"), r.path("topic-0/careless")))
	// A new file never synced: it exists, empty. A removed file stays removed.
	must(t, os.WriteFile(r.path("topic-0/new.log"), []byte("data"), 0o644))
	must(t, os.WriteFile(r.path("gone"), []byte("x"), 0o644))
	syncFile(t, r.path("gone"))
	must(t, os.Remove(r.path("gone")))
	r.powerCut()
	if got := r.read("topic-0/cp"); got != "offsets 7" {
		t.Fatalf("a synced file renamed before the cut reads %q", got)
	}
	if got := r.read("topic-0/careless"); got != "" {
		t.Fatalf("an unsynced file renamed before the cut kept its data: %q", got)
	}
	if got := r.read("topic-0/new.log"); got != "" {
		t.Fatalf("an unsynced new file kept its data: %q", got)
	}
	if _, err := os.Stat(r.path("gone")); !os.IsNotExist(err) {
		t.Fatalf("a removed file came back: %v", err)
	}
}

// What an orderly stop does (the OS outlives the process): every change reaches the disk.
func TestWriteBackKeepsEverything(t *testing.T) {
	r := newRig(t)
	must(t, os.WriteFile(r.path("log"), []byte("unsynced but kept"), 0o644))
	written := r.fsys.SyncAll()
	if written.Files != 1 {
		t.Fatalf("sync wrote %+v", written)
	}
	r.powerCut()
	if got := r.read("log"); got != "unsynced but kept" {
		t.Fatalf("after a write-back and a cut the file reads %q", got)
	}
}

// After a cut nothing more can be written: the power is off.
func TestNothingIsWrittenAfterTheCut(t *testing.T) {
	r := newRig(t)
	f, err := os.Create(r.path("late"))
	must(t, err)
	defer f.Close()
	r.fsys.Cut()
	if _, err := f.Write([]byte("x")); err == nil {
		t.Fatalf("a write after the cut succeeded")
	} else if errno, ok := err.(*os.PathError); ok && errno.Err != syscall.EIO {
		t.Fatalf("a write after the cut failed with %v, want EIO", err)
	}
}

// A lookup or a directory listing (READDIRPLUS) reports each file's attributes; a file
// with unsynced writes must show the size its writers see, not its disk's, or the
// kernel would cut reads at the disk's size while the JVM runs.
func TestListingsShowTheSizeWritersSee(t *testing.T) {
	r := newRig(t)
	must(t, os.WriteFile(r.path("grown"), []byte("A"), 0o644))
	syncFile(t, r.path("grown"))
	must(t, os.WriteFile(r.path("shrunk"), []byte("0123456789"), 0o644))
	syncFile(t, r.path("shrunk"))
	f, err := os.OpenFile(r.path("grown"), os.O_WRONLY|os.O_APPEND, 0)
	must(t, err)
	_, err = f.WriteString("BC")
	must(t, err)
	must(t, f.Close())
	must(t, os.Truncate(r.path("shrunk"), 3))
	entries, err := os.ReadDir(r.dir)
	must(t, err)
	for _, e := range entries {
		info, err := e.Info()
		must(t, err)
		want := map[string]int64{"grown": 3, "shrunk": 3}[e.Name()]
		if info.Size() != want {
			t.Fatalf("the listing shows %s with %d bytes, want %d", e.Name(), info.Size(), want)
		}
	}
	if got := r.read("grown"); got != "ABC" {
		t.Fatalf("after a listing the file reads %q, want ABC", got)
	}
}

// Past its budget the layer writes the largest files back, as a kernel past
// vm.dirty_bytes does: they survive the cut, and the cut's report says so.
func TestPastTheBudgetTheLargestFilesAreWrittenBack(t *testing.T) {
	r := newRig(t)
	must(t, r.fsys.Unmount())
	r.mountWith(4 * PageSize)
	must(t, os.WriteFile(r.path("big"), bytes.Repeat([]byte("b"), 3*PageSize), 0o644))
	must(t, os.WriteFile(r.path("small"), []byte("s"), 0o644))
	if r.onDisk("big") != "" {
		t.Fatalf("big was written back within the budget")
	}
	must(t, os.WriteFile(r.path("more"), bytes.Repeat([]byte("m"), PageSize), 0o644))
	lost := r.powerCut()
	if got := r.read("big"); len(got) != 3*PageSize {
		t.Fatalf("the largest file was not written back past the budget: %d bytes", len(got))
	}
	if r.read("small") != "" || lost.WrittenBack != 3*PageSize {
		t.Fatalf("small reads %q; the report says %d bytes written back", r.read("small"), lost.WrittenBack)
	}
}
