// Command faultfs is a FUSE layer under a node's data directories that holds every
// write and truncation of a file until that file is fsynced, so that a power cut
// (CutSignal, SIGPWR, to `faultfs run`) loses exactly what a real one loses:
// everything written since the last fsync or fdatasync of each file, while what was
// synced survives. Its semantics are lazyfs's (dsrhaslab/lazyfs; Jepsen drives it from
// jepsen/src/jepsen/lazyfs.clj and tests it in jepsen/test/jepsen/lazyfs_test.clj),
// written anew on go-fuse so one static binary serves the node image.
//
// Usage:
//
//	faultfs run [-control SOCKET] [-events FILE] -user USER -mount DIR [-mount DIR...] -- COMMAND...
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
		_ = flags.Parse(os.Args[2:])
		if len(dirs) == 0 || *runAs == "" || flags.NArg() == 0 {
			usage()
		}
		os.Exit(runSupervisor(dirs, *runAs, *control, *events, flags.Args()))
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
	fmt.Fprintln(os.Stderr, "usage: faultfs run [-control SOCKET] [-events FILE] -user USER -mount DIR... -- COMMAND...")
	fmt.Fprintln(os.Stderr, "       faultfs ctl [-control SOCKET] status|sync")
	os.Exit(254)
}
