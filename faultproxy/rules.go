package main

// rules.go: what the harness asks the proxy to do to chosen connections, and what each
// rule did. A rule selects connections by the peer's address and the client id its
// requests carry, and acts on one direction or both:
//
//	hold   from the first request of the named APIs on (any request when none is
//	       named), hold every frame of the connection, in order, until the rule is
//	       removed or hold_ms have passed; then deliver them all, in order, even when
//	       the sender has closed its side meanwhile (the proxy half-closes the other
//	       side only after the last held frame);
//	cut    the same, but at the end the held frames are thrown away and both sides
//	       of the connection are reset: a connection that died in a partition;
//	delay  deliver each frame delay_ms plus up to jitter_ms after it arrived, in
//	       order (netem's delay and jitter, which the kernel here lacks).
//
// A hold or cut captures a connection once; per_client bounds how many connections of
// one client id a rule captures (1: the first connection only, so that the client's
// retries on a new connection go through while the old requests wait). With scope
// "client", a request of the named APIs on one connection captures every later
// connection and frame of that client at once (a client that stopped sending).

import (
	"fmt"
	"math/rand"
	"regexp"
	"slices"
	"time"
)

// recordsKept bounds how many frame records one rule keeps (the rest are counted).
const recordsKept = 2000

// Rule is one instruction to the proxy, as the harness sends it, with what it did.
type Rule struct {
	ID           int      `json:"id"`
	Name         string   `json:"name"`
	Action       string   `json:"action"`
	Direction    string   `json:"direction"`
	Peers        []string `json:"peers,omitempty"`
	ExcludePeers []string `json:"exclude_peers,omitempty"`
	Client       string   `json:"client,omitempty"`
	APIs         []string `json:"apis,omitempty"`
	Scope        string   `json:"scope,omitempty"`
	PerClient    int      `json:"per_client,omitempty"`
	HoldMs       int      `json:"hold_ms,omitempty"`
	DelayMs      int      `json:"delay_ms,omitempty"`
	JitterMs     int      `json:"jitter_ms,omitempty"`

	clientRe  *regexp.Regexp
	apiKeys   map[int16]bool
	active    bool
	created   time.Time
	ended     time.Time
	captured  map[string]int
	triggered map[string]bool
	holds     []*Hold
	stats     ruleStats
}

// ruleStats is what a rule did, as its report shows it.
type ruleStats struct {
	conns        map[int]bool
	frames       map[string]int
	bytes        int64
	longest      time.Duration
	afterClosed  int
	discarded    int
	delayedTotal time.Duration
	records      []*FrameRecord
	unrecorded   int
}

// Hold is one connection captured by a hold or cut rule.
type Hold struct {
	rule     *Rule
	conn     *Conn
	began    time.Time
	released time.Time
	timer    *time.Timer
}

func (h *Hold) done() bool { return !h.released.IsZero() }

// prepare checks a rule from the harness and readies its matchers.
func (r *Rule) prepare(id int, now time.Time) error {
	switch r.Action {
	case "hold", "cut", "delay":
	default:
		return fmt.Errorf("action %q: hold, cut or delay", r.Action)
	}
	if r.Direction == "" {
		r.Direction = "up"
	}
	if !slices.Contains([]string{"up", "down", "both"}, r.Direction) {
		return fmt.Errorf("direction %q: up, down or both", r.Direction)
	}
	if r.Scope == "" {
		r.Scope = "connection"
	}
	if r.Scope != "connection" && r.Scope != "client" {
		return fmt.Errorf("scope %q: connection or client", r.Scope)
	}
	if r.HoldMs < 0 || r.DelayMs < 0 || r.JitterMs < 0 || r.PerClient < 0 {
		return fmt.Errorf("negative hold_ms, delay_ms, jitter_ms or per_client")
	}
	if r.Client != "" {
		re, err := regexp.Compile(r.Client)
		if err != nil {
			return fmt.Errorf("client %q: %v", r.Client, err)
		}
		r.clientRe = re
	}
	r.apiKeys = map[int16]bool{}
	for _, name := range r.APIs {
		key, ok := apiKey(name)
		if !ok {
			return fmt.Errorf("no API named %q", name)
		}
		r.apiKeys[key] = true
	}
	r.ID, r.active, r.created = id, true, now
	r.captured, r.triggered = map[string]int{}, map[string]bool{}
	r.stats.conns, r.stats.frames = map[int]bool{}, map[string]int{}
	return nil
}

// matches says whether a connection is one the rule selects.
func (r *Rule) matches(c *Conn) bool {
	if len(r.Peers) > 0 && !slices.Contains(r.Peers, c.peer) {
		return false
	}
	if slices.Contains(r.ExcludePeers, c.peer) {
		return false
	}
	return r.clientRe == nil || r.clientRe.MatchString(c.client)
}

// covers says whether the rule acts on a direction.
func (r *Rule) covers(direction string) bool {
	return r.Direction == "both" || r.Direction == direction
}

// triggers says whether a request of api on c starts a hold or cut of this rule there.
func (r *Rule) triggers(c *Conn, api int16) bool {
	if r.PerClient > 0 && r.captured[c.client] >= r.PerClient {
		return false
	}
	return len(r.apiKeys) == 0 || r.apiKeys[api] || (r.Scope == "client" && r.triggered[c.client])
}

// delayFor returns how long a frame is delayed: delay_ms plus a uniform jitter.
func (r *Rule) delayFor() time.Duration {
	d := time.Duration(r.DelayMs) * time.Millisecond
	if r.JitterMs > 0 {
		d += time.Duration(rand.Int63n(int64(r.JitterMs)*int64(time.Millisecond) + 1))
	}
	return d
}

// keep adds a held frame's record to the rule's report.
func (r *Rule) keep(rec *FrameRecord) {
	if len(r.stats.records) < recordsKept {
		r.stats.records = append(r.stats.records, rec)
	} else {
		r.stats.unrecorded++
	}
}

// Report is a rule and what it did, as the control API returns it.
type Report struct {
	*Rule
	Active      bool           `json:"active"`
	Created     float64        `json:"created"`
	Ended       float64        `json:"ended,omitempty"`
	Conns       int            `json:"conns"`
	Frames      map[string]int `json:"frames"`
	Bytes       int64          `json:"bytes"`
	HeldNow     int            `json:"held_now"`
	Undelivered int            `json:"undelivered"`
	LongestMs   int64          `json:"longest_ms"`
	AfterClosed int            `json:"delivered_after_sender_closed"`
	Discarded   int            `json:"discarded"`
	DelayedMs   int64          `json:"delayed_ms,omitempty"`
	Records     []FrameRecord  `json:"records"`
	Unrecorded  int            `json:"unrecorded"`
	Clients     map[string]int `json:"clients,omitempty"`
}

// report returns what the rule did so far; the caller holds the proxy's lock.
func (r *Rule) report() Report {
	rep := Report{
		Rule: r, Active: r.active, Created: unix(r.created), Ended: unix(r.ended),
		Conns: len(r.stats.conns), Bytes: r.stats.bytes,
		LongestMs: r.stats.longest.Milliseconds(), AfterClosed: r.stats.afterClosed,
		Discarded: r.stats.discarded, DelayedMs: r.stats.delayedTotal.Milliseconds(),
		Unrecorded: r.stats.unrecorded, Frames: map[string]int{}, Clients: map[string]int{},
	}
	// Copies: the report is encoded after the proxy's lock is let go.
	for k, v := range r.stats.frames {
		rep.Frames[k] = v
	}
	for k, v := range r.captured {
		rep.Clients[k] = v
	}
	for _, rec := range r.stats.records {
		rep.Records = append(rep.Records, *rec)
	}
	for _, h := range r.holds {
		if !h.done() {
			rep.HeldNow++
		}
	}
	for _, rec := range r.stats.records {
		if rec.Delivered == 0 && !rec.Discarded {
			rep.Undelivered++
		}
	}
	return rep
}

// unix returns a time as seconds since the epoch (0 for the zero time).
func unix(t time.Time) float64 {
	if t.IsZero() {
		return 0
	}
	return float64(t.UnixMicro()) / 1e6
}
