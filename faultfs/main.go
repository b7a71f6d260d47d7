// Command faultfs is a FUSE layer under a node's data directories that holds every
// write and truncation of a file until that file is fsynced, so that a power cut
// loses exactly what issue 36 asks: everything written since the last fsync or
// fdatasync of each file, while what was synced survives. Its semantics are lazyfs's
// (dsrhaslab/lazyfs, README and lazyfs/src/lazyfs.cpp; Jepsen drives it from
// jepsen/src/jepsen/lazyfs.clj and tests it in jepsen/test/jepsen/lazyfs_test.clj),
// written anew on go-fuse so that one static binary serves the node image.
//
// What is held, and until when. Data (write, pwrite, the pages of a shared writable
// mmap when the kernel writes them back) and size changes (ftruncate, truncate, an
// open with O_TRUNC) stay in the daemon's own page cache, 4 KiB pages per file,
// until fsync, fdatasync or msync(MS_SYNC) of that file through any descriptor; then
// the file's whole state is written to its backing file. fdatasync is fsync here.
// Closing a file syncs nothing (POSIX does not, nor does lazyfs).
//
// What is not held. Names and attributes reach the disk at once: create, mkdir,
// rename, link, symlink, unlink, rmdir, chmod, chown, utimes. lazyfs does the same
// (its cache holds file data only; lfs_rename renames in the underlying file system
// at once), a journaling file system commits them within seconds in order, and
// Kafka and ZooKeeper fsync the directory after every rename that matters, so held
// names would model a window they close themselves, at the cost of a journal with
// ordering rules no file system documents exactly. What follows: a file created and
// never synced survives empty; a file renamed before its data was synced keeps its
// new name and loses the data (as on XFS, or ext4 without auto_da_alloc).
//
// The cut (CutSignal, SIGPWR, to `faultfs run`): the JVM's process group is
// SIGKILLed and reaped, the kernel hands over the pages it still holds dirty for the
// mount (only so that they are counted), every unsynced change is thrown away, every
// later change fails with EIO, the mount is detached and the daemon exits; the node
// restarts on the backing directories. A backing file never receives an unsynced
// byte, and the kernel's page cache of the mount dies with the mount (the next start
// is a new mount, a new superblock), so no page cache, the node's or the host's, can
// decide what survives: only a sync does. The host's own fsync is not called: the
// host never loses power, so its page cache of a backing file is as good as its disk.
//
// What the OS outlives. A crash (CrashSignal, SIGUSR1: the JVM SIGKILLed), a stop
// (SIGTERM, passed to the JVM) and the JVM's own exit write everything back first: a
// process dying loses nothing written.
//
// Harsher than a kernel, on purpose: a kernel writes dirty pages back within about 30
// s (vm.dirty_expire_centisecs) and under memory pressure, so a real cut loses less
// than everything since the last sync; faultfs keeps the worst case, as lazyfs does,
// except past its memory budget (budget.go). Not modelled: torn pages, writes
// reordered within one file's sync, lost directory entries, disks that lie about
// their write cache.
//
// Usage:
//
//	faultfs run [-control SOCKET] [-events FILE] [-budget-mib N] -user USER -mount DIR [-mount DIR...] -- COMMAND...
//	faultfs ctl [-control SOCKET] status|sync
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"strings"
)

// dirList is a repeatable -mount flag.
type dirList []string

func (d *dirList) String() string     { return strings.Join(*d, ",") }
func (d *dirList) Set(v string) error { *d = append(*d, v); return nil }

func main() {
	log.SetPrefix("faultfs: ")
	log.SetFlags(0)
	if len(os.Args) < 2 {
		usage()
	}
	switch os.Args[1] {
	case "run":
		flags := flag.NewFlagSet("run", flag.ExitOnError)
		var dirs dirList
		flags.Var(&dirs, "mount", "a data directory to put the layer under (repeatable)")
		runAs := flags.String("user", "", "the user the command runs as")
		control := flags.String("control", DefaultControl, "the control socket")
		events := flags.String("events", "", "a file to append one JSON line per event to")
		budget := flags.Int64("budget-mib", 64, "MiB of unsynced pages a mount holds before it writes the largest files back")
		_ = flags.Parse(os.Args[2:])
		if len(dirs) == 0 || *runAs == "" || flags.NArg() == 0 {
			usage()
		}
		os.Exit(runSupervisor(dirs, *runAs, *control, *events, *budget<<20, flags.Args()))
	case "ctl":
		flags := flag.NewFlagSet("ctl", flag.ExitOnError)
		control := flags.String("control", DefaultControl, "the control socket")
		_ = flags.Parse(os.Args[2:])
		if flags.NArg() != 1 {
			usage()
		}
		os.Exit(runControl(*control, flags.Arg(0)))
	default:
		usage()
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: faultfs run [-control SOCKET] [-events FILE] [-budget-mib N] -user USER -mount DIR... -- COMMAND...")
	fmt.Fprintln(os.Stderr, "       faultfs ctl [-control SOCKET] status|sync")
	os.Exit(254)
}
