package main

// pipes.go: one connection's two directions. Each pipe's reader cuts the byte stream
// into frames and queues them; its writer delivers them in order, waiting while a hold
// keeps the frame at the head and until a delay is over, and half-closes the other side
// after the last frame, so that the broker reads every late request before the close.

import (
	"bufio"
	"encoding/binary"
	"net"
	"sync"
	"time"
)

// Conn is one client connection and its twin to the broker.
type Conn struct {
	id       int
	peer     string
	client   string
	opened   time.Time
	front    *net.TCPConn // the sender's side (a client, or another broker)
	back     *net.TCPConn // the broker's side
	up       *pipe        // requests: front to back
	down     *pipe        // responses: back to front
	upHold   *Hold
	downHold *Hold
	inflight map[int32]*request
	finished int
}

// pipe is one direction of a connection.
type pipe struct {
	direction string
	dst       *net.TCPConn
	queue     []*frame
	cond      *sync.Cond
	closed    bool      // cut: nothing more is delivered
	broken    bool      // dst refused a write: the rest is thrown away
	srcEnded  time.Time // when the sender closed its side
}

// frame is one Kafka frame (or the end of the stream) on its way.
type frame struct {
	data []byte
	eof  bool
	hold *Hold
	due  time.Time
	req  *request
	rec  *FrameRecord
}

// request is what the proxy knows of a request until its response passes.
type request struct {
	api     int16
	version int16
	rec     *FrameRecord
	end     *EndEvent
	markers []*MarkerEvent
	batches []Batch // a Produce's batches of idempotent or transactional producers
}

// FrameRecord is one held (or cut) frame, for the rule's report.
type FrameRecord struct {
	Conn          int            `json:"conn"`
	Peer          string         `json:"peer"`
	Client        string         `json:"client"`
	Direction     string         `json:"direction"`
	API           string         `json:"api"`
	Version       int16          `json:"version"`
	Corr          int32          `json:"correlation_id"`
	Bytes         int            `json:"bytes"`
	Arrived       float64        `json:"arrived"`
	Delivered     float64        `json:"delivered,omitempty"`
	Discarded     bool           `json:"discarded,omitempty"`
	SenderClosed  float64        `json:"sender_closed,omitempty"`
	Batches       []Batch        `json:"batches,omitempty"`
	EndTxn        *EndTxn        `json:"end_txn,omitempty"`
	AddPartitions *AddPartitions `json:"add_partitions,omitempty"`
	Markers       []Marker       `json:"markers,omitempty"`
	Answer        *Answer        `json:"answer,omitempty"`
}

// Answer is the broker's response to a held request. Duplicate: the broker answered a
// Produce with the offset it had given the same batch before (its producer's retry on
// another connection): nothing was appended.
type Answer struct {
	At         float64           `json:"at"`
	Error      int16             `json:"error"`
	Partitions []PartitionResult `json:"partitions,omitempty"`
	Duplicate  bool              `json:"duplicate,omitempty"`
}

// readRequests cuts the sender's stream into requests and queues them.
func (p *Proxy) readRequests(c *Conn) {
	r := bufio.NewReaderSize(c.front, 64<<10)
	for {
		data, err := readFrame(r)
		if err != nil {
			break
		}
		now := time.Now()
		h, herr := parseRequest(data)
		p.mu.Lock()
		f := &frame{data: data, req: &request{api: -1}}
		if herr == nil {
			f.req.api, f.req.version = h.api, h.version
			p.noteRequest(c, h, f.req, now)
			p.classify(c, h.api, now)
		}
		f.hold = c.upHold
		if f.hold != nil {
			f.rec = p.recordHeld(c, f.hold, "up", h, len(data), now)
			f.req.rec = f.rec
			describe(f.rec, h)
			if f.req.end != nil {
				f.req.end.Held = true
			}
			for _, m := range f.req.markers {
				m.Held = true
			}
		}
		f.due = p.delayUntil(c, "up", f.req.api, now)
		c.up.push(f)
		p.mu.Unlock()
	}
	p.mu.Lock()
	c.up.srcEnded = time.Now()
	c.up.push(&frame{eof: true})
	p.mu.Unlock()
}

// readResponses cuts the broker's stream into responses, reads the answers to held
// requests and EndTxns, and queues them.
func (p *Proxy) readResponses(c *Conn) {
	r := bufio.NewReaderSize(c.back, 64<<10)
	for {
		data, err := readFrame(r)
		if err != nil {
			break
		}
		now := time.Now()
		p.mu.Lock()
		api := int16(-1)
		var corr int32
		if len(data) >= 8 {
			corr = int32(binary.BigEndian.Uint32(data[4:8]))
			if req := c.inflight[corr]; req != nil {
				delete(c.inflight, corr)
				api = req.api
				p.noteAnswer(c, req, data, now)
			}
		}
		f := &frame{data: data, hold: c.downHold}
		if f.hold != nil {
			f.rec = p.recordHeld(c, f.hold, "down", requestHeader{api: api, corr: corr}, len(data), now)
		}
		f.due = p.delayUntil(c, "down", api, now)
		c.down.push(f)
		p.mu.Unlock()
	}
	p.mu.Lock()
	c.down.srcEnded = time.Now()
	c.down.push(&frame{eof: true})
	p.mu.Unlock()
}

// push queues a frame; the caller holds the lock.
func (pp *pipe) push(f *frame) {
	if pp.closed {
		return
	}
	pp.queue = append(pp.queue, f)
	pp.cond.Broadcast()
}

// write delivers one pipe's frames in order, each once its hold is released and its
// delay is over; at the end of the stream it half-closes the other side.
func (p *Proxy) write(c *Conn, pp *pipe) {
	defer p.pipeDone(c)
	for {
		p.mu.Lock()
		for !pp.closed && (len(pp.queue) == 0 || pp.queue[0].waiting()) {
			pp.cond.Wait()
		}
		if pp.closed {
			p.mu.Unlock()
			return
		}
		f := pp.queue[0]
		pp.queue = pp.queue[1:]
		if f.req != nil && f.req.api >= 0 && len(f.data) >= 12 {
			corr := int32(binary.BigEndian.Uint32(f.data[8:12]))
			c.inflight[corr] = f.req // before the write: the answer may come at once
		}
		p.mu.Unlock()
		if wait := time.Until(f.due); wait > 0 {
			time.Sleep(wait)
		}
		if f.eof {
			_ = pp.dst.CloseWrite()
			return
		}
		var err error
		if !pp.broken {
			_, err = pp.dst.Write(f.data)
		}
		p.mu.Lock()
		if err != nil {
			pp.broken = true
		}
		p.delivered(c, pp, f, time.Now())
		p.mu.Unlock()
	}
}

func (f *frame) waiting() bool { return f.hold != nil && !f.hold.done() }

// delivered notes that a frame left the proxy (or was thrown away on a broken pipe).
func (p *Proxy) delivered(c *Conn, pp *pipe, f *frame, now time.Time) {
	if f.req != nil && !pp.broken {
		if f.req.end != nil {
			f.req.end.Delivered = unix(now)
		}
		for _, m := range f.req.markers {
			m.Delivered = unix(now)
		}
	}
	rec := f.rec
	if rec == nil {
		return
	}
	r := f.hold.rule
	if pp.broken {
		rec.Discarded = true
		r.stats.discarded++
	} else {
		rec.Delivered = unix(now)
		if !pp.srcEnded.IsZero() && pp.srcEnded.Before(now) {
			rec.SenderClosed = unix(pp.srcEnded)
			r.stats.afterClosed++
		}
	}
	if held := now.Sub(time.UnixMicro(int64(rec.Arrived * 1e6))); held > r.stats.longest {
		r.stats.longest = held
	}
	p.events.write("frame", map[string]any{"rule": r.ID, "frame": rec})
}

// pipeDone closes the connection once both directions have ended.
func (p *Proxy) pipeDone(c *Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c.finished++
	if c.finished < 2 {
		return
	}
	_ = c.front.Close()
	_ = c.back.Close()
	delete(p.conns, c.id)
	if s := p.clients[c.client]; s != nil && c.client != "" {
		s.Open--
	}
}
