package main

// supervisor.go: `faultfs run`, a node's main process. It mounts the layer over each
// data directory, starts the node's own command (the JVM) under another user, and
// outlives it as the OS does: when the command ends by itself, by a signal it is
// passed, or by CrashSignal (its process group SIGKILLed), every file's unsynced state
// is written back before the mounts come down. Only CutSignal loses it: the command's
// process group is SIGKILLed, every unsynced change is thrown away and the daemon
// exits at once, as a machine does when its power is cut. Each start, end and cut
// is one JSON line in the events file.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log"
	"os"
	"os/exec"
	"os/signal"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// BackingSuffix names a mount's backing directory: /var/lib/kafka/data is kept in
// /var/lib/kafka/data.disk, what the node's disk holds.
const BackingSuffix = ".disk"

// Event is one record of the events file (and an answer of the control socket): what
// a power cut lost, or what a crash, an exit or a sync wrote back.
type Event struct {
	Event  string        `json:"event"`
	Time   string        `json:"time"`
	Pid    int           `json:"pid,omitempty"`
	Killed string        `json:"killed,omitempty"`
	Exit   string        `json:"exit,omitempty"`
	Mounts []MountReport `json:"mounts"`
}

// supervisor is one `faultfs run`.
type supervisor struct {
	mounts []*FS
	child  *exec.Cmd
	events string // the JSON-lines log of events, or ""
	done   chan struct{}

	mu     sync.Mutex
	mode   string    // running, then cut, crash or exit: how the command's end is handled
	killed time.Time // when stop sent SIGKILL
}

// prepare makes dir a mount point over dir+BackingSuffix. On the node's first start
// the backing directory does not exist: whatever the image or the harness put in dir
// moves there, so the node starts on it.
func prepare(dir string, uid, gid int) (string, error) {
	backing := dir + BackingSuffix
	if _, err := os.Stat(backing); err == nil {
		return backing, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if err := os.Chown(dir, uid, gid); err != nil {
		return "", err
	}
	made := backing + ".new"
	if err := os.RemoveAll(made); err != nil {
		return "", err
	}
	if err := os.Mkdir(made, 0o755); err != nil {
		return "", err
	}
	if err := os.Chown(made, uid, gid); err != nil {
		return "", err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		if err := os.Rename(filepath.Join(dir, e.Name()), filepath.Join(made, e.Name())); err != nil {
			return "", err
		}
	}
	return backing, os.Rename(made, backing)
}

// lookupUser returns the uid and gid of a user name.
func lookupUser(name string) (int, int, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return 0, 0, err
	}
	uid, err := strconv.Atoi(u.Uid)
	if err != nil {
		return 0, 0, err
	}
	gid, err := strconv.Atoi(u.Gid)
	return uid, gid, err
}

// runSupervisor mounts dirs (each holding up to budget bytes unsynced), runs cmd as
// runAs, serves the control socket and returns the exit code: the command's, or 128
// plus the signal that ended it.
func runSupervisor(dirs []string, runAs, control, events string, budget int64, cmd []string) int {
	uid, gid, err := lookupUser(runAs)
	if err != nil {
		log.Printf("user %s: %v", runAs, err)
		return 255
	}
	s := &supervisor{events: events, done: make(chan struct{}), mode: "running"}
	for _, dir := range dirs {
		backing, err := prepare(dir, uid, gid)
		if err == nil {
			var fsys *FS
			if fsys, err = Mount(dir, backing, budget); err == nil {
				s.mounts = append(s.mounts, fsys)
				continue
			}
		}
		log.Printf("mount %s: %v", dir, err)
		s.unmountAll()
		return 255
	}
	if err := s.listen(control); err != nil {
		log.Printf("control socket %s: %v", control, err)
		s.unmountAll()
		return 255
	}
	if err := closeOnExec(); err != nil {
		log.Printf("close-on-exec: %v", err)
		s.unmountAll()
		return 255
	}
	s.child = exec.Command(cmd[0], cmd[1:]...)
	s.child.Stdin, s.child.Stdout, s.child.Stderr = os.Stdin, os.Stdout, os.Stderr
	s.child.SysProcAttr = &syscall.SysProcAttr{
		Setpgid:    true,
		Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)},
	}
	// Caught before the command starts: a stop signal must never end the daemon itself.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, CutSignal, CrashSignal)
	if err := s.child.Start(); err != nil {
		log.Printf("start %v: %v", cmd, err)
		s.unmountAll()
		return 255
	}
	s.record(Event{Event: "start", Pid: s.child.Process.Pid, Mounts: s.status()})
	go s.forwardSignals(sigs)
	go func() {
		_ = s.child.Wait()
		close(s.done)
	}()
	<-s.done
	return s.finish()
}

// CutSignal (a power cut) and CrashSignal (a crash) are signals to the container,
// which tini passes on: the control node needs no process in the node to ask, and
// several nodes lose power within the time of one signal each.
const (
	CutSignal   = syscall.SIGPWR
	CrashSignal = syscall.SIGUSR1
)

// closeOnExec keeps every descriptor of ours out of the command. go-fuse opens
// /dev/fuse without O_CLOEXEC when it mounts directly; a JVM holding it would keep the
// FUSE connection alive after the daemon died, and hang for ever in its own exit,
// waiting on the FLUSH of a file it closes (seen: a node Docker could not kill).
func closeOnExec() error {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return err
	}
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
	return nil
}

// forwardSignals passes the stop signals Docker sends (through tini) to the command,
// and turns CutSignal and CrashSignal into a cut or a crash.
func (s *supervisor) forwardSignals(sigs <-chan os.Signal) {
	for sig := range sigs {
		var err error
		switch sig {
		case CutSignal:
			err = s.stop("cut")
		case CrashSignal:
			err = s.stop("crash")
		default:
			err = s.child.Process.Signal(sig)
		}
		if err != nil {
			log.Printf("%v: %v", sig, err)
		}
	}
}

// finish handles the command's end as the mode says, and returns the exit code.
func (s *supervisor) finish() int {
	s.mu.Lock()
	if s.mode == "running" {
		s.mode = "exit"
	}
	mode, killed := s.mode, s.killed
	s.mu.Unlock()
	code, exit := exitStatus(s.child.ProcessState)
	event := Event{Pid: s.child.Process.Pid, Exit: exit}
	if !killed.IsZero() {
		event.Killed = killed.UTC().Format(time.RFC3339Nano)
	}
	if mode == "cut" {
		// The power is off: no page the kernel still holds, and no unsynced byte of
		// ours, reaches the disk. Flushing the kernel first only lets us count its pages.
		for _, m := range s.mounts {
			_ = m.FlushKernel()
		}
		event.Event = "power-cut"
		event.Mounts = s.each((*FS).Cut)
		for _, m := range s.mounts {
			_ = syscall.Unmount(m.Mountpoint, syscall.MNT_DETACH)
		}
	} else {
		event.Event = mode
		event.Mounts = s.writeBack()
	}
	s.record(event)
	return code
}

// writeBack writes every unsynced change to disk and takes the mounts down: the OS
// outlived the command. Returns what was written.
func (s *supervisor) writeBack() []MountReport {
	for _, m := range s.mounts {
		if err := m.FlushKernel(); err != nil {
			log.Printf("syncfs %s: %v", m.Mountpoint, err)
		}
	}
	reports := s.each((*FS).SyncAll)
	s.unmountAll()
	// Unmounting flushes what the kernel still held; write that back too.
	for i, late := range s.each((*FS).SyncAll) {
		reports[i].Files += late.Files
		reports[i].UnsyncedBytes += late.UnsyncedBytes
	}
	return reports
}

func (s *supervisor) each(do func(*FS) MountReport) []MountReport {
	reports := make([]MountReport, 0, len(s.mounts))
	for _, m := range s.mounts {
		reports = append(reports, do(m))
	}
	return reports
}

func (s *supervisor) status() []MountReport { return s.each((*FS).Status) }

func (s *supervisor) unmountAll() {
	for _, m := range s.mounts {
		if err := m.Unmount(); err != nil {
			log.Printf("unmount %s: %v", m.Mountpoint, err)
		}
	}
}

// stop ends the command with SIGKILL to its whole process group, to be handled as
// mode (cut or crash).
func (s *supervisor) stop(mode string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mode != "running" {
		return fmt.Errorf("the command is already ending (%s)", s.mode)
	}
	s.mode, s.killed = mode, time.Now()
	return syscall.Kill(-s.child.Process.Pid, syscall.SIGKILL)
}

// record appends event to the events log, stamped now.
func (s *supervisor) record(event Event) {
	event.Time = time.Now().UTC().Format(time.RFC3339Nano)
	line, _ := json.Marshal(event)
	log.Printf("%s", line)
	if s.events == "" {
		return
	}
	file, err := os.OpenFile(s.events, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		log.Printf("events %s: %v", s.events, err)
		return
	}
	defer file.Close()
	_, _ = file.Write(append(line, '\n'))
}

// exitStatus returns the exit code a shell would report for state, and its words.
func exitStatus(state *os.ProcessState) (int, string) {
	if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), fmt.Sprintf("signal %d (%s)", int(ws.Signal()), ws.Signal())
	}
	return state.ExitCode(), fmt.Sprintf("exit %d", state.ExitCode())
}
