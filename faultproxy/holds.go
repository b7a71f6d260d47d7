package main

// holds.go: the rules at work. A request that triggers a hold or cut rule captures its
// connection; a delay rule stamps each frame with the time it may leave; a release lets
// a hold's frames go on, or throws a cut's away and resets its connection.

import (
	"net"
	"time"
)

// classify lets every hold or cut rule that selects c capture it when api triggers
// the rule; the caller holds the lock.
func (p *Proxy) classify(c *Conn, api int16, now time.Time) {
	for _, r := range p.rules {
		if !r.active || r.Action == "delay" || !r.matches(c) || !r.triggers(c, api) {
			continue
		}
		if (r.covers("up") && c.upHold != nil) || (r.covers("down") && c.downHold != nil) {
			continue
		}
		h := &Hold{rule: r, conn: c, began: now}
		if r.covers("up") {
			c.upHold = h
		}
		if r.covers("down") {
			c.downHold = h
		}
		r.holds = append(r.holds, h)
		r.captured[c.client]++
		r.stats.conns[c.id] = true
		if r.Scope == "client" {
			r.triggered[c.client] = true
		}
		if r.HoldMs > 0 {
			h.timer = time.AfterFunc(time.Duration(r.HoldMs)*time.Millisecond, func() {
				p.mu.Lock()
				defer p.mu.Unlock()
				p.release(h, time.Now())
			})
		}
		p.events.write("capture", map[string]any{"rule": r.ID, "conn": c.id, "peer": c.peer, "client": c.client, "api": apiName(api)})
	}
}

// recordHeld makes the record of a frame a hold captured; the caller holds the lock.
func (p *Proxy) recordHeld(c *Conn, h *Hold, direction string, hd requestHeader, size int, now time.Time) *FrameRecord {
	name := "unknown"
	if hd.api >= 0 {
		name = apiName(hd.api)
	}
	rec := &FrameRecord{
		Conn: c.id, Peer: c.peer, Client: c.client, Direction: direction, API: name,
		Version: hd.version, Corr: hd.corr, Bytes: size, Arrived: unix(now),
	}
	r := h.rule
	r.stats.frames[name]++
	r.stats.bytes += int64(size)
	r.keep(rec)
	return rec
}

// describe adds what a held request's body says to its record.
func describe(rec *FrameRecord, h requestHeader) {
	switch h.api {
	case apiProduce:
		rec.Batches = produceBatches(h.version, h.body)
	case apiEndTxn:
		rec.EndTxn = parseEndTxn(h.version, h.body)
	case apiAddPartitions:
		rec.AddPartitions = parseAddPartitions(h.version, h.body)
	case apiWriteTxnMarkers:
		rec.Markers = parseMarkers(h.version, h.body)
	}
}

// delayUntil returns when a frame arriving now may leave under the delay rules that
// select its connection (the zero time when none does); the caller holds the lock.
func (p *Proxy) delayUntil(c *Conn, direction string, api int16, now time.Time) time.Time {
	var due time.Time
	for _, r := range p.rules {
		if !r.active || r.Action != "delay" || !r.covers(direction) || !r.matches(c) {
			continue
		}
		if len(r.apiKeys) > 0 && !r.apiKeys[api] {
			continue
		}
		d := r.delayFor()
		r.stats.conns[c.id] = true
		r.stats.frames[apiName(api)]++
		r.stats.delayedTotal += d
		if t := now.Add(d); t.After(due) {
			due = t
		}
	}
	return due
}

// release ends one hold: a hold's frames go on in order; a cut's are thrown away and
// the connection is reset. The caller holds the lock.
func (p *Proxy) release(h *Hold, now time.Time) {
	if h.done() {
		return
	}
	h.released = now
	if h.timer != nil {
		h.timer.Stop()
	}
	c := h.conn
	if c.upHold == h {
		c.upHold = nil
	}
	if c.downHold == h {
		c.downHold = nil
	}
	p.events.write("release", map[string]any{"rule": h.rule.ID, "conn": c.id, "held_ms": now.Sub(h.began).Milliseconds()})
	if h.rule.Action == "cut" {
		p.reset(c, h)
		return
	}
	c.up.cond.Broadcast()
	c.down.cond.Broadcast()
}

// reset throws away what a cut held and resets both sides of the connection.
func (p *Proxy) reset(c *Conn, h *Hold) {
	for _, pp := range []*pipe{c.up, c.down} {
		for _, f := range pp.queue {
			if f.rec != nil && f.hold == h {
				f.rec.Discarded = true
				h.rule.stats.discarded++
				p.events.write("frame", map[string]any{"rule": h.rule.ID, "frame": f.rec})
			}
		}
		pp.queue, pp.closed = nil, true
		pp.cond.Broadcast()
	}
	for _, side := range []*net.TCPConn{c.front, c.back} {
		_ = side.SetLinger(0)
		_ = side.Close()
	}
}

// addRule installs a rule; returns its report.
func (p *Proxy) addRule(r *Rule) (Report, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := r.prepare(len(p.rules)+1, time.Now()); err != nil {
		return Report{}, err
	}
	p.rules = append(p.rules, r)
	p.events.write("rule", map[string]any{"rule": r})
	return r.report(), nil
}

// removeRule stops a rule from capturing or delaying anything more; with now (or a
// hold without hold_ms) it releases every connection it holds at once, else each
// keeps its own hold_ms. Returns the rule's report, or false for an unknown id.
func (p *Proxy) removeRule(id int, now bool) (Report, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if id < 1 || id > len(p.rules) {
		return Report{}, false
	}
	r := p.rules[id-1]
	p.end(r, now || r.HoldMs == 0)
	return r.report(), true
}

// end deactivates a rule, releasing its holds when asked; the caller holds the lock.
func (p *Proxy) end(r *Rule, releaseNow bool) {
	at := time.Now()
	if r.active {
		r.active = false
		r.ended = at
	}
	if releaseNow {
		for _, h := range r.holds {
			p.release(h, at)
		}
	}
}

// removeAll ends every rule and releases everything held (a heal); returns each
// rule's report.
func (p *Proxy) removeAll() []Report {
	p.mu.Lock()
	defer p.mu.Unlock()
	reports := make([]Report, 0, len(p.rules))
	for _, r := range p.rules {
		p.end(r, true)
		reports = append(reports, r.report())
	}
	return reports
}

// report returns one rule's report, or false.
func (p *Proxy) report(id int) (Report, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if id < 1 || id > len(p.rules) {
		return Report{}, false
	}
	return p.rules[id-1].report(), true
}
