// Command faultproxy sits in front of one Kafka broker, in the broker's own container:
// it listens where the broker is advertised, forwards every connection to the broker
// on its private port, and cuts each direction into Kafka's size-prefixed frames, so
// that it can hold the requests of chosen connections (a client to this broker, another
// broker to this one; all of them or only those carrying chosen APIs, such as Produce
// or EndTxn) for a chosen time and then deliver them in order, even after the sender
// gave up; cut them; or delay each by a fixed time plus jitter (rules.go). It is the
// harness's late-delivery and slow-link fault (issue 37): an iptables DROP never
// delivers a request late, and this kernel has no netem.
//
// Because it runs in the broker's network namespace, the broker's iptables rules (the
// partition faults) still see every peer's own address, and a kill or pause of the
// broker takes the proxy with it, as a node's network stack goes with the node.
//
// Usage:
//
//	faultproxy -listen :9092 -upstream 127.0.0.1:19092 -control :9095 [-events FILE]
package main

import (
	"encoding/json"
	"flag"
	"log"
	"net"
	"net/http"
	"os"
	"sync"
	"time"
)

func main() {
	listen := flag.String("listen", ":9092", "where clients and other brokers connect")
	upstream := flag.String("upstream", "127.0.0.1:19092", "the broker's own listener")
	control := flag.String("control", ":9095", "the control API's address")
	events := flag.String("events", "", "a JSON-lines file of rules, captures, releases and held frames")
	flag.Parse()
	log.SetPrefix("faultproxy: ")
	ev, err := openEvents(*events)
	if err != nil {
		log.Fatal(err)
	}
	p := newProxy(*upstream, ev)
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	go func() {
		server := &http.Server{Addr: *control, Handler: p.handler(), ReadHeaderTimeout: 5 * time.Second}
		log.Fatal(server.ListenAndServe())
	}()
	ev.write("start", map[string]any{"listen": *listen, "upstream": *upstream})
	log.Fatal(p.serve(ln))
}

// eventLog appends one JSON object a line to a file (nowhere when it has none).
type eventLog struct {
	mu  sync.Mutex
	out *os.File
}

func openEvents(path string) (*eventLog, error) {
	if path == "" {
		return &eventLog{}, nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	return &eventLog{out: f}, nil
}

func (e *eventLog) write(kind string, fields map[string]any) {
	if e == nil || e.out == nil {
		return
	}
	fields["event"] = kind
	fields["time"] = unix(time.Now())
	line, err := json.Marshal(fields)
	if err != nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	_, _ = e.out.Write(append(line, '\n'))
}
