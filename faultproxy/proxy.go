package main

// proxy.go: the in-path proxy. It accepts every connection meant for the broker and
// pairs it with one to the broker (pipes.go moves the frames, holds.go applies the
// rules); it counts what each client sent and remembers the EndTxn requests and the
// transaction markers that passed, for the harness to read (control.go).

import (
	"log"
	"net"
	"sync"
	"time"
)

// endsKept bounds how many EndTxn requests, and how many transaction markers, the
// proxy remembers.
const endsKept = 50000

// Proxy forwards every connection it accepts to upstream, applying the rules.
type Proxy struct {
	upstream string
	started  time.Time
	events   *eventLog

	mu       sync.Mutex
	nextConn int
	conns    map[int]*Conn
	rules    []*Rule
	clients  map[string]*ClientStats
	ends     []*EndEvent
	markers  []*MarkerEvent
	appended map[batchKey]int64 // the offset each recent batch was appended at
	order    []batchKey         // appended's keys, oldest first
}

// batchKey names one batch of an idempotent or transactional producer: a broker
// appends it once, and answers a resend of it with the same offset.
type batchKey struct {
	producer  int64
	epoch     int16
	topic     string
	partition int32
	sequence  int32
}

// EndEvent is one EndTxn request that passed the proxy, held or not.
type EndEvent struct {
	EndTxn
	Conn      int     `json:"conn"`
	Client    string  `json:"client"`
	Arrived   float64 `json:"arrived"`
	Delivered float64 `json:"delivered,omitempty"`
	Held      bool    `json:"held"`
	Error     int16   `json:"error"`
}

// MarkerEvent is one transaction marker a coordinator asked this broker to write.
type MarkerEvent struct {
	Marker
	Conn      int     `json:"conn"`
	Peer      string  `json:"peer"`
	Arrived   float64 `json:"arrived"`
	Delivered float64 `json:"delivered,omitempty"`
	Held      bool    `json:"held"`
}

// ClientStats is what passed for one client id: proof that the client goes through.
type ClientStats struct {
	Peer            string         `json:"peer"`
	Conns           int            `json:"conns"`
	Open            int            `json:"open"`
	Requests        map[string]int `json:"requests"`
	TransactionalID string         `json:"transactional_id,omitempty"`
	TimeoutMs       int32          `json:"transaction_timeout_ms,omitempty"`
	ProducerID      int64          `json:"producer_id"` // -1 until an InitProducerId answered
	ProducerEpoch   int16          `json:"producer_epoch"`
	LastAPI         string         `json:"last_api"`
	LastAt          float64        `json:"last_at"`
}

func newProxy(upstream string, events *eventLog) *Proxy {
	return &Proxy{
		upstream: upstream, started: time.Now(), events: events,
		conns: map[int]*Conn{}, clients: map[string]*ClientStats{}, appended: map[batchKey]int64{},
	}
}

// serve accepts connections until the listener fails.
func (p *Proxy) serve(ln net.Listener) error {
	for {
		conn, err := ln.Accept()
		if err != nil {
			return err
		}
		go p.open(conn.(*net.TCPConn))
	}
}

// open pairs an accepted connection with one to the broker and starts its pipes. When
// the broker does not answer, the sender's connection is reset, as a refused one.
func (p *Proxy) open(front *net.TCPConn) {
	backConn, err := net.DialTimeout("tcp", p.upstream, 5*time.Second)
	if err != nil {
		_ = front.SetLinger(0)
		_ = front.Close()
		return
	}
	back := backConn.(*net.TCPConn)
	peer, _, _ := net.SplitHostPort(front.RemoteAddr().String())
	p.mu.Lock()
	p.nextConn++
	c := &Conn{id: p.nextConn, peer: peer, opened: time.Now(), front: front, back: back, inflight: map[int32]*request{}}
	c.up = &pipe{direction: "up", dst: back, cond: sync.NewCond(&p.mu)}
	c.down = &pipe{direction: "down", dst: front, cond: sync.NewCond(&p.mu)}
	p.conns[c.id] = c
	p.mu.Unlock()
	go p.readRequests(c)
	go p.readResponses(c)
	go p.write(c, c.up)
	go p.write(c, c.down)
}

// noteRequest counts a request for its client and reads what the proxy remembers of
// EndTxn and InitProducerId requests; the caller holds the lock.
func (p *Proxy) noteRequest(c *Conn, h requestHeader, req *request, now time.Time) {
	if c.client == "" && h.client != "" {
		c.client = h.client
		s := p.client(h.client)
		s.Conns++
		s.Open++
		s.Peer = c.peer
	}
	s := p.client(c.client)
	name := apiName(h.api)
	s.Requests[name]++
	s.LastAPI, s.LastAt = name, unix(now)
	switch h.api {
	case apiProduce:
		for _, b := range produceBatches(h.version, h.body) {
			if b.ProducerID >= 0 {
				req.batches = append(req.batches, b)
			}
		}
	case apiEndTxn:
		if e := parseEndTxn(h.version, h.body); e != nil {
			req.end = &EndEvent{EndTxn: *e, Conn: c.id, Client: c.client, Arrived: unix(now), Error: -1}
			p.ends = append(p.ends, req.end)
			if len(p.ends) > endsKept {
				p.ends = p.ends[len(p.ends)-endsKept:]
			}
		}
	case apiInitProducerID:
		if i := parseInitProducer(h.version, h.body); i != nil && i.TransactionalID != "" {
			s.TransactionalID, s.TimeoutMs = i.TransactionalID, i.TimeoutMs
		}
	case apiWriteTxnMarkers:
		for _, m := range parseMarkers(h.version, h.body) {
			e := &MarkerEvent{Marker: m, Conn: c.id, Peer: c.peer, Arrived: unix(now)}
			req.markers = append(req.markers, e)
			p.markers = append(p.markers, e)
		}
		if len(p.markers) > endsKept {
			p.markers = p.markers[len(p.markers)-endsKept:]
		}
	}
}

func (p *Proxy) client(id string) *ClientStats {
	s := p.clients[id]
	if s == nil {
		s = &ClientStats{Requests: map[string]int{}, ProducerID: -1, ProducerEpoch: -1}
		p.clients[id] = s
	}
	return s
}

// noteAnswer reads a response the proxy wants: to a held request, an EndTxn or an
// InitProducerId; the caller holds the lock.
func (p *Proxy) noteAnswer(c *Conn, req *request, data []byte, now time.Time) {
	_, body := parseResponse(data, req.api, req.version)
	if body == nil {
		return
	}
	switch req.api {
	case apiEndTxn:
		if req.end != nil {
			req.end.Error = errorAfterThrottle(body)
		}
	case apiInitProducerID:
		if code, pid, epoch, ok := initProducerAnswer(body); ok && code == 0 {
			s := p.client(c.client)
			s.ProducerID, s.ProducerEpoch = pid, epoch
		}
	}
	var results []PartitionResult
	duplicate := false
	if req.api == apiProduce && len(req.batches) > 0 {
		results = produceResults(req.version, body)
		duplicate = p.noteAppended(req.batches, results)
	}
	if req.rec == nil {
		return
	}
	answer := &Answer{At: unix(now), Error: -1}
	switch req.api {
	case apiProduce:
		if results == nil {
			results = produceResults(req.version, body)
		}
		answer.Partitions, answer.Duplicate = results, duplicate
		if len(results) > 0 {
			answer.Error = results[0].Error
		}
	case apiEndTxn, apiInitProducerID:
		answer.Error = errorAfterThrottle(body)
	case apiAddPartitions:
		answer.Error = addPartitionsError(req.version, body)
	}
	req.rec.Answer = answer
}

// noteAppended remembers where each batch of a Produce was appended; returns whether
// every one had been appended before at the same offset (a resend's answer). The caller
// holds the lock.
func (p *Proxy) noteAppended(batches []Batch, results []PartitionResult) bool {
	seen, all := 0, true
	for _, b := range batches {
		for _, r := range results {
			if r.Topic != b.Topic || r.Partition != b.Partition || r.Error != 0 {
				continue
			}
			key := batchKey{b.ProducerID, b.ProducerEpoch, b.Topic, b.Partition, b.BaseSequence}
			if offset, ok := p.appended[key]; ok {
				seen++
				all = all && offset == r.BaseOffset
				continue
			}
			all = false
			p.appended[key] = r.BaseOffset
			p.order = append(p.order, key)
			if len(p.order) > endsKept {
				delete(p.appended, p.order[0])
				p.order = p.order[1:]
			}
		}
	}
	return seen > 0 && all
}

// Stats is the proxy's view: who passed, what it holds now.
type Stats struct {
	Upstream string                  `json:"upstream"`
	Started  float64                 `json:"started"`
	Open     int                     `json:"open_connections"`
	Clients  map[string]*ClientStats `json:"clients"`
	Active   []int                   `json:"active_rules"`
}

func (p *Proxy) stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := Stats{Upstream: p.upstream, Started: unix(p.started), Open: len(p.conns), Clients: map[string]*ClientStats{}}
	for id, c := range p.clients {
		copied := *c
		copied.Requests = map[string]int{}
		for k, v := range c.Requests {
			copied.Requests[k] = v
		}
		s.Clients[id] = &copied
	}
	for _, r := range p.rules {
		if r.active {
			s.Active = append(s.Active, r.ID)
		}
	}
	return s
}

// endsSince returns the EndTxn requests that arrived at or after since (unix seconds).
func (p *Proxy) endsSince(since float64) []EndEvent {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := []EndEvent{}
	for _, e := range p.ends {
		if e.Arrived >= since {
			out = append(out, *e)
		}
	}
	return out
}

// markersSince returns the transaction markers that arrived at or after since.
func (p *Proxy) markersSince(since float64) []MarkerEvent {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := []MarkerEvent{}
	for _, m := range p.markers {
		if m.Arrived >= since {
			out = append(out, *m)
		}
	}
	return out
}

func init() { log.SetFlags(log.LstdFlags | log.Lmicroseconds) }
