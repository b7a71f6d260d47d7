package main

// fake_test.go: requests encoded as clients encode them, and a broker that answers
// every request (a Produce with its next offset, an InitProducerId with an id), for the
// proxy's tests.

import (
	"bytes"
	"encoding/binary"
	"net"
	"sync"
	"testing"
	"time"
)

// ---- encoding requests as clients do --------------------------------------------

type enc struct{ bytes.Buffer }

func (e *enc) i8(v int8)   { e.WriteByte(byte(v)) }
func (e *enc) i16(v int16) { _ = binary.Write(e, binary.BigEndian, v) }
func (e *enc) i32(v int32) { _ = binary.Write(e, binary.BigEndian, v) }
func (e *enc) i64(v int64) { _ = binary.Write(e, binary.BigEndian, v) }
func (e *enc) uv(v uint64) { e.Write(binary.AppendUvarint(nil, v)) }
func (e *enc) str(s string) {
	e.i16(int16(len(s)))
	e.WriteString(s)
}
func (e *enc) cstr(s string) {
	e.uv(uint64(len(s) + 1))
	e.WriteString(s)
}

// frameOf prefixes a message with its size.
func frameOf(msg []byte) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(msg))), msg...)
}

// reqFrame builds a request frame: header v1, or v2 (tagged fields) when flex.
func reqFrame(api, version int16, corr int32, client string, flex bool, body []byte) []byte {
	var e enc
	e.i16(api)
	e.i16(version)
	e.i32(corr)
	e.str(client)
	if flex {
		e.uv(0)
	}
	e.Write(body)
	return frameOf(e.Bytes())
}

// batch builds a record batch header (and no records) of a producer.
func batch(pid int64, epoch int16, seq, count int32) []byte {
	var e enc
	e.i64(0)
	e.i32(batchHeaderLen - 12)
	e.i32(0)
	e.i8(2)
	e.i32(0)
	e.i16(0x10)
	e.i32(count - 1)
	e.i64(0)
	e.i64(0)
	e.i64(pid)
	e.i16(epoch)
	e.i32(seq)
	e.i32(count)
	return e.Bytes()
}

func produceV8(pid int64, seq int32) []byte {
	var e enc
	e.str("tx-1")
	e.i16(-1)
	e.i32(5000)
	e.i32(1)
	e.str("store-1")
	e.i32(1)
	e.i32(2)
	b := batch(pid, 3, seq, 1)
	e.i32(int32(len(b)))
	e.Write(b)
	return e.Bytes()
}

func produceV9(pid int64, seq int32) []byte {
	var e enc
	e.cstr("tx-1")
	e.i16(-1)
	e.i32(5000)
	e.uv(2)
	e.cstr("store-1")
	e.uv(2)
	e.i32(4)
	b := batch(pid, 7, seq, 2)
	e.uv(uint64(len(b) + 1))
	e.Write(b)
	e.uv(0)
	e.uv(0)
	e.uv(0)
	return e.Bytes()
}

func endTxnV3(pid int64, commit bool) []byte {
	var e enc
	e.cstr("tx-1")
	e.i64(pid)
	e.i16(2)
	if commit {
		e.i8(1)
	} else {
		e.i8(0)
	}
	e.uv(0)
	return e.Bytes()
}

// ---- a broker that answers every request ------------------------------------------

type seen struct {
	api  int16
	corr int32
	at   time.Time
}

type fakeBroker struct {
	ln       net.Listener
	mu       sync.Mutex
	got      []seen
	next     int64
	appended map[[2]int64]int64 // (producer, sequence) -> offset: a resend's answer
}

func startBroker(t *testing.T) *fakeBroker {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &fakeBroker{ln: ln, appended: map[[2]int64]int64{}}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go b.serve(c)
		}
	}()
	t.Cleanup(func() { _ = ln.Close() })
	return b
}

func (b *fakeBroker) serve(c net.Conn) {
	defer c.Close()
	for {
		data, err := readFrame(c)
		if err != nil {
			return
		}
		h, _ := parseRequest(data)
		b.mu.Lock()
		b.got = append(b.got, seen{h.api, h.corr, time.Now()})
		offset, partition := b.next, int32(2)
		b.next++
		if h.api == apiProduce {
			if batches := produceBatches(h.version, h.body); len(batches) > 0 {
				partition = batches[0].Partition
				key := [2]int64{batches[0].ProducerID, int64(batches[0].BaseSequence)}
				if earlier, ok := b.appended[key]; ok {
					offset = earlier
				}
				b.appended[key] = offset
			}
		}
		b.mu.Unlock()
		var e enc
		e.i32(h.corr)
		switch {
		case h.api == apiProduce && h.version >= 9: // flexible: one topic, one partition
			e.uv(0)
			e.uv(2)
			e.cstr("store-1")
			e.uv(2)
			e.i32(partition)
			e.i16(0)
			e.i64(offset)
			e.i64(-1)
			e.i64(0)
			e.uv(1) // no record errors
			e.uv(0) // no error message
			e.uv(0)
			e.uv(0)
			e.i32(0)
			e.uv(0)
		case h.api == apiProduce: // a version 8 answer: one topic, one partition
			e.i32(1)
			e.str("store-1")
			e.i32(1)
			e.i32(partition)
			e.i16(0)
			e.i64(offset)
			e.i64(-1)
			e.i64(0)
			e.i32(0)
			e.i16(-1)
			e.i32(0)
		case h.api == apiInitProducerID: // flexible header, then throttle, error, pid, epoch
			e.uv(0)
			e.i32(0)
			e.i16(0)
			e.i64(4242)
			e.i16(5)
			e.uv(0)
		default:
			e.i32(0)
		}
		if _, err := c.Write(frameOf(e.Bytes())); err != nil {
			return
		}
	}
}

func (b *fakeBroker) received() []seen {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]seen(nil), b.got...)
}

// waitFor polls until cond holds or a second passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func startProxy(t *testing.T, b *fakeBroker) (*Proxy, string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := newProxy(b.ln.Addr().String(), &eventLog{})
	go func() { _ = p.serve(ln) }()
	t.Cleanup(func() {
		_ = ln.Close()
		p.removeAll()
	})
	return p, ln.Addr().String()
}

func dial(t *testing.T, addr string) net.Conn {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func send(t *testing.T, c net.Conn, frame []byte) {
	if _, err := c.Write(frame); err != nil {
		t.Fatal(err)
	}
}
