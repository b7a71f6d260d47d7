package main

// Porcupine's kv logs (test_data/kv/*.txt), read as Porcupine's tests read them
// (porcupine_test.go, parseKvLog and kvModel): one EDN map per line, get, put and
// append on string keys, each key a register of strings that starts empty,
// checked key by key (Porcupine's partitions). These logs have no crashed ops.

import (
	"fmt"
	"hash/fnv"
	"regexp"
	"strconv"

	"github.com/anishathalye/porcupine"
)

// kvInput is an op as invoked: f is "get", "put" or "append".
type kvInput struct {
	f     string
	key   string
	value string
}

// kvOutput is what an op returned: the value a get read.
type kvOutput struct {
	value string
}

var kvModel = porcupine.Model{
	PartitionEvent: kvPartition,
	Init:           func() interface{} { return "" },
	Step:           kvStep,
	Hash: func(state interface{}) uint64 {
		h := fnv.New64a()
		h.Write([]byte(state.(string)))
		return h.Sum64()
	},
}

func kvStep(state, input, output interface{}) (bool, interface{}) {
	st, in := state.(string), input.(kvInput)
	switch in.f {
	case "get":
		return output.(kvOutput).value == st, st
	case "put":
		return true, in.value
	default:
		return true, st + in.value
	}
}

// kvPartition splits a history by key: a return goes with its call's key.
func kvPartition(history []porcupine.Event) [][]porcupine.Event {
	keyOf := map[int]string{}
	byKey := map[string][]porcupine.Event{}
	var keys []string
	for _, event := range history {
		if event.Kind == porcupine.CallEvent {
			keyOf[event.Id] = event.Value.(kvInput).key
		}
		key := keyOf[event.Id]
		if _, seen := byKey[key]; !seen {
			keys = append(keys, key)
		}
		byKey[key] = append(byKey[key], event)
	}
	partitions := make([][]porcupine.Event, 0, len(keys))
	for _, key := range keys {
		partitions = append(partitions, byKey[key])
	}
	return partitions
}

// `{:process 0, :type :invoke, :f :append, :key "0", :value "x 0 0 y"}`; the
// strings hold no quotes or backslashes.
var kvLine = regexp.MustCompile(
	`^\{:process (\d+), :type :(invoke|ok), :f :(get|put|append), :key "([^"\\]*)", :value (nil|"[^"\\]*")\}$`)

// kvRecord reads one line of a kv log.
func kvRecord(line string) (record, error) {
	if line == "" {
		return record{kind: notAnOp}, nil
	}
	m := kvLine.FindStringSubmatch(line)
	if m == nil {
		return record{}, fmt.Errorf("not an op of Porcupine's kv logs: %q", line)
	}
	process, _ := strconv.Atoi(m[1])
	kind, f, key, value := m[2], m[3], m[4], m[5]
	text, _ := strconv.Unquote(value) // "" for nil
	if kind == "invoke" {
		return record{call, process, kvInput{f: f, key: key, value: text}}, nil
	}
	return record{ret, process, kvOutput{value: text}}, nil
}
