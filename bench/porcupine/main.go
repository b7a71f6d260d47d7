// Command porcupine-driver checks history files with Porcupine
// (github.com/anishathalye/porcupine, the version go.mod pins) and prints one JSON
// object: each file's verdict and the seconds its reading and its check took.
//
// Usage: porcupine-driver -model etcd|kv [-timeout 120s] FILE...
//
// The models are the ones Porcupine's own tests check its test corpus with
// (porcupine_test.go): a register with compare-and-set for Jepsen's etcd logs
// (etcd.go), and a key-value store of strings partitioned by key for its kv logs
// (kv.go). The files are checked one after another in this one process, as
// Porcupine's tests do; bench/bench_porcupine.py runs it beside `harness check`.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"time"

	"github.com/anishathalye/porcupine"
)

// exitBadInput is the exit code for a file that cannot be read as the model's
// history (the harness's own code for bad input).
const exitBadInput = 254

// A format is how one kind of history file is read, and the model it is checked
// against. parse reads one line; crashed is the output a call still open at the
// end of the file returns with (nil: the format has no crashed ops).
type format struct {
	parse   func(line string) (record, error)
	model   porcupine.Model
	crashed interface{}
}

var formats = map[string]format{
	"etcd": {parse: etcdRecord, model: etcdModel, crashed: etcdOutput{unknown: true}},
	"kv":   {parse: kvRecord, model: kvModel},
}

// A recordKind says what a line of a history is.
type recordKind int

const (
	notAnOp recordKind = iota // any other line of a log
	call                      // a process invoked an op: value is its input
	ret                       // the process's op returned: value is its output
	crash                     // the op may or may not have happened: it stays open
)

// A record is one line of a history as a format reads it.
type record struct {
	kind    recordKind
	process int
	value   interface{}
}

// fileResult is what the driver prints for one file.
type fileResult struct {
	Path         string  `json:"path"`
	Ops          int     `json:"ops"`
	Verdict      string  `json:"verdict"`
	ReadSeconds  float64 `json:"read_seconds"`
	CheckSeconds float64 `json:"check_seconds"`
}

// report is the one JSON object the driver prints.
type report struct {
	Model          string       `json:"model"`
	TimeoutSeconds float64      `json:"timeout_seconds"`
	Seconds        float64      `json:"seconds"`
	Files          []fileResult `json:"files"`
}

var verdicts = map[porcupine.CheckResult]string{
	porcupine.Ok:      "valid",
	porcupine.Illegal: "invalid",
	porcupine.Unknown: "unknown",
}

func main() {
	model := flag.String("model", "", "etcd (Jepsen's etcd logs) or kv (Porcupine's kv logs)")
	timeout := flag.Duration("timeout", 0, "time limit of each file's check (0: none)")
	flag.Parse()
	chosen, known := formats[*model]
	if !known || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: porcupine-driver -model etcd|kv [-timeout D] FILE...")
		os.Exit(exitBadInput)
	}
	out := report{Model: *model, TimeoutSeconds: timeout.Seconds(), Files: []fileResult{}}
	started := time.Now()
	for _, path := range flag.Args() {
		result, err := checkFile(path, chosen, *timeout)
		if err != nil {
			fmt.Fprintf(os.Stderr, "porcupine-driver: %s: %v\n", path, err)
			os.Exit(exitBadInput)
		}
		out.Files = append(out.Files, result)
	}
	out.Seconds = time.Since(started).Seconds()
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, "porcupine-driver:", err)
		os.Exit(1)
	}
}

// checkFile reads one history file as f's format and checks it against f's
// model within timeout. It returns the verdict with the time each step took.
func checkFile(path string, f format, timeout time.Duration) (fileResult, error) {
	started := time.Now()
	file, err := os.Open(path)
	if err != nil {
		return fileResult{}, err
	}
	defer file.Close()
	events, err := readEvents(file, f)
	if err != nil {
		return fileResult{}, err
	}
	read := time.Now()
	verdict := porcupine.CheckEventsTimeout(f.model, events, timeout)
	return fileResult{
		Path:         path,
		Ops:          len(events) / 2,
		Verdict:      verdicts[verdict],
		ReadSeconds:  read.Sub(started).Seconds(),
		CheckSeconds: time.Since(read).Seconds(),
	}, nil
}

// readEvents turns a history's lines into Porcupine's events, pairing each
// return with its process's open call. A call still open at the end (a crashed
// op) returns after every other event, with the format's crashed output.
func readEvents(r io.Reader, f format) ([]porcupine.Event, error) {
	var events []porcupine.Event
	open := map[int]int{} // process -> id of its open call
	calls := 0
	scanner := bufio.NewScanner(r)
	scanner.Buffer(make([]byte, 1<<16), 1<<26)
	for n := 1; scanner.Scan(); n++ {
		rec, err := f.parse(scanner.Text())
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		id, isOpen := open[rec.process]
		switch {
		case rec.kind == notAnOp:
			continue
		case rec.kind == call && isOpen:
			return nil, fmt.Errorf("line %d: process %d calls before its op returned", n, rec.process)
		case rec.kind == call:
			open[rec.process] = calls
			events = append(events, porcupine.Event{ClientId: rec.process, Kind: porcupine.CallEvent, Value: rec.value, Id: calls})
			calls++
		case !isOpen:
			return nil, fmt.Errorf("line %d: process %d has no op to complete", n, rec.process)
		case rec.kind == ret:
			delete(open, rec.process)
			events = append(events, porcupine.Event{ClientId: rec.process, Kind: porcupine.ReturnEvent, Value: rec.value, Id: id})
		case rec.kind == crash: // open until the end, below
		}
	}
	if err := scanner.Err(); err != nil {
		return nil, err
	}
	if calls == 0 {
		return nil, errors.New("no op records")
	}
	if len(open) > 0 && f.crashed == nil {
		return nil, fmt.Errorf("%d ops never returned", len(open))
	}
	crashed := make([]int, 0, len(open))
	for process := range open {
		crashed = append(crashed, process)
	}
	sort.Ints(crashed) // a fixed order: Go's map order is random
	for _, process := range crashed {
		events = append(events, porcupine.Event{ClientId: process, Kind: porcupine.ReturnEvent, Value: f.crashed, Id: open[process]})
	}
	return events, nil
}
