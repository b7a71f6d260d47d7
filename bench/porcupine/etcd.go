package main

// Jepsen's etcd logs (Porcupine's test_data/jepsen/etcd_*.log), read as Porcupine's
// tests read them (porcupine_test.go, parseJepsenLog and etcdModel): a register
// that starts as nil, with read, write and cas. A failed cas observed a value other
// than the one it expected; a read that timed out observed nothing; an op logged
// as info (it timed out: it may or may not have happened) stays open to the end
// of the history and returns "unknown", whatever the register holds.

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/anishathalye/porcupine"
)

// etcdInput is an op as invoked: f is 'r' (read), 'w' (write value) or 'c' (cas
// from value to to).
type etcdInput struct {
	f     byte
	value int
	to    int
}

// etcdOutput is what an op returned: a read's value (exists false: nil), whether
// a cas succeeded, or unknown for an op that timed out.
type etcdOutput struct {
	exists  bool
	value   int
	ok      bool
	unknown bool
}

// etcdState is the register: set false until the first write.
type etcdState struct {
	set   bool
	value int
}

var etcdModel = porcupine.Model{
	Init: func() interface{} { return etcdState{} },
	Step: etcdStep,
}

func etcdStep(state, input, output interface{}) (bool, interface{}) {
	st, in, out := state.(etcdState), input.(etcdInput), output.(etcdOutput)
	switch in.f {
	case 'r':
		return out.unknown || out.exists == st.set && (!st.set || out.value == st.value), st
	case 'w':
		return true, etcdState{set: true, value: in.value}
	default:
		matches := st.set && st.value == in.value
		next := st
		if matches {
			next = etcdState{set: true, value: in.to}
		}
		return out.unknown || out.ok == matches, next
	}
}

// An op line of a Jepsen log: `INFO  jepsen.util - 3	:invoke	:cas	[1 4]`.
var (
	etcdLine = regexp.MustCompile(`jepsen\.util\s+-\s+(\d+)\s+:(\w+)\s+:(\w+)\s*(.*?)\s*$`)
	etcdPair = regexp.MustCompile(`^\[(-?\d+)\s+(-?\d+)\]$`)
	etcdInt  = regexp.MustCompile(`^-?\d+$`)
)

// etcdRecord reads one line of a Jepsen etcd log.
func etcdRecord(line string) (record, error) {
	m := etcdLine.FindStringSubmatch(line)
	if m == nil {
		if strings.Contains(line, "jepsen.util") {
			return record{}, fmt.Errorf("not an op record: %q", line)
		}
		return record{kind: notAnOp}, nil
	}
	process, _ := strconv.Atoi(m[1])
	kind, f, value := m[2], m[3], m[4]
	switch {
	case kind == "invoke" && f == "read" && value == "nil":
		return record{call, process, etcdInput{f: 'r'}}, nil
	case kind == "invoke" && f == "write" && etcdInt.MatchString(value):
		v, _ := strconv.Atoi(value)
		return record{call, process, etcdInput{f: 'w', value: v}}, nil
	case kind == "invoke" && f == "cas" && etcdPair.MatchString(value):
		pair := etcdPair.FindStringSubmatch(value)
		from, _ := strconv.Atoi(pair[1])
		to, _ := strconv.Atoi(pair[2])
		return record{call, process, etcdInput{f: 'c', value: from, to: to}}, nil
	case kind == "ok" && f == "read" && value == "nil":
		return record{ret, process, etcdOutput{}}, nil
	case kind == "ok" && f == "read" && etcdInt.MatchString(value):
		v, _ := strconv.Atoi(value)
		return record{ret, process, etcdOutput{exists: true, value: v}}, nil
	case kind == "ok" && f == "write":
		return record{ret, process, etcdOutput{}}, nil
	case (kind == "ok" || kind == "fail") && f == "cas":
		return record{ret, process, etcdOutput{ok: kind == "ok"}}, nil
	case kind == "fail" && f == "read":
		return record{ret, process, etcdOutput{unknown: true}}, nil
	case kind == "info":
		return record{crash, process, nil}, nil
	}
	return record{}, fmt.Errorf("an op Porcupine's etcd model does not read: %q", line)
}
