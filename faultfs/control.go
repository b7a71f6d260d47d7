package main

// control.go: the control socket, a Unix socket only root in the node can reach
// (like lazyfs's fifo, dsrhaslab/lazyfs README "Running and Injecting faults", and
// Jepsen's jepsen/src/jepsen/lazyfs.clj `fifo!`). One command a connection, one JSON
// line back:
//
//	status  every mount's unsynced files and bytes, nothing changed
//	sync    write every unsynced change to disk (lazyfs's cache-checkpoint)
//
// A power cut and a crash are signals (CutSignal, CrashSignal): they end the node,
// and the control node sends them to several nodes at once.

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"
)

// DefaultControl is where `faultfs run` listens and `faultfs ctl` connects.
const DefaultControl = "/run/faultfs.sock"

// listen starts serving the control socket at path.
func (s *supervisor) listen(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return err
	}
	if err := os.Chmod(path, 0o600); err != nil {
		return err
	}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go s.serve(conn)
		}
	}()
	return nil
}

// serve answers one command.
func (s *supervisor) serve(conn net.Conn) {
	defer conn.Close()
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil && line == "" {
		return
	}
	var answer any
	switch command := strings.TrimSpace(line); command {
	case "status":
		answer = Event{Event: "status", Time: time.Now().UTC().Format(time.RFC3339Nano),
			Pid: s.child.Process.Pid, Mounts: s.status()}
	case "sync":
		event := Event{Event: "sync", Mounts: s.each((*FS).SyncAll)}
		s.record(event)
		answer = event
	default:
		answer = map[string]string{"error": fmt.Sprintf("unknown command %q: status or sync", command)}
	}
	line2, _ := json.Marshal(answer)
	_, _ = conn.Write(append(line2, '\n'))
}

// runControl sends command to the socket at path and prints the answer. Returns 0,
// or 1 when the answer is an error or there is none.
func runControl(path, command string) int {
	conn, err := net.DialTimeout("unix", path, 5*time.Second)
	if err != nil {
		fmt.Fprintf(os.Stderr, "faultfs ctl: %v\n", err)
		return 1
	}
	defer conn.Close()
	if _, err := fmt.Fprintf(conn, "%s\n", command); err != nil {
		fmt.Fprintf(os.Stderr, "faultfs ctl: %v\n", err)
		return 1
	}
	answer, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		fmt.Fprintf(os.Stderr, "faultfs ctl: no answer: %v\n", err)
		return 1
	}
	fmt.Print(answer)
	var parsed map[string]any
	if json.Unmarshal([]byte(answer), &parsed) != nil || parsed["error"] != nil {
		return 1
	}
	return 0
}
