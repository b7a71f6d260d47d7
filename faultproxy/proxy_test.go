package main

// proxy_test.go: holds, cuts, delays and what the proxy reads, against fake_test.go's
// broker.

import (
	"io"
	"testing"
	"time"
)

func TestFramesPassAndEveryClientIsCounted(t *testing.T) {
	b := startBroker(t)
	p, addr := startProxy(t, b)
	c := dial(t, addr)
	send(t, c, reqFrame(3, 12, 1, "p0-producer", false, nil))
	if _, err := readFrame(c); err != nil {
		t.Fatal(err)
	}
	stats := p.stats()
	if got := stats.Clients["p0-producer"].Requests["Metadata"]; got != 1 {
		t.Fatalf("Metadata requests counted for p0-producer: %d, want 1", got)
	}
}

func TestAHeldProduceArrivesAfterTheSenderClosedAndLandsWithItsOffset(t *testing.T) {
	b := startBroker(t)
	p, addr := startProxy(t, b)
	rep, err := p.addRule(&Rule{Name: "late", Action: "hold", APIs: []string{"Produce"}, PerClient: 1, HoldMs: 300})
	if err != nil {
		t.Fatal(err)
	}
	c := dial(t, addr)
	send(t, c, reqFrame(3, 12, 1, "p1-producer", false, nil))
	if _, err := readFrame(c); err != nil {
		t.Fatal("the Metadata request before the Produce must pass:", err)
	}
	sent := time.Now()
	send(t, c, reqFrame(apiProduce, 8, 2, "p1-producer", false, produceV8(1000, 17)))
	time.Sleep(100 * time.Millisecond)
	if n := len(b.received()); n != 1 {
		t.Fatalf("the broker saw %d requests during the hold, want 1 (the Metadata)", n)
	}
	_ = c.Close() // the client gives up
	waitFor(t, "the held Produce", func() bool { return len(b.received()) == 2 })
	got := b.received()[1]
	if got.api != apiProduce || got.at.Sub(sent) < 300*time.Millisecond {
		t.Fatalf("the broker got %v after %v, want the Produce after 300 ms", got, got.at.Sub(sent))
	}
	waitFor(t, "the answer", func() bool {
		r, _ := p.report(rep.ID)
		return len(r.Records) == 1 && r.Records[0].Answer != nil
	})
	r, _ := p.report(rep.ID)
	rec := r.Records[0]
	if rec.SenderClosed == 0 || r.AfterClosed != 1 || r.Frames["Produce"] != 1 || r.HeldNow != 0 {
		t.Fatalf("report: %+v; record %+v", r, rec)
	}
	if len(rec.Batches) != 1 || rec.Batches[0].ProducerID != 1000 || rec.Batches[0].BaseSequence != 17 ||
		!rec.Batches[0].Transactional || rec.Batches[0].Partition != 2 {
		t.Fatalf("batches: %+v", rec.Batches)
	}
	if rec.Answer.Error != 0 || rec.Answer.Partitions[0].BaseOffset != 1 {
		t.Fatalf("answer: %+v", rec.Answer)
	}
}

func TestOneConnectionPerClientIsHeldAndItsRetryGoesThrough(t *testing.T) {
	b := startBroker(t)
	p, addr := startProxy(t, b)
	rep, _ := p.addRule(&Rule{Name: "late", Action: "hold", APIs: []string{"Produce"}, PerClient: 1})
	first, second := dial(t, addr), dial(t, addr)
	send(t, first, reqFrame(apiProduce, 9, 1, "p2-producer", true, produceV9(7, 0)))
	waitFor(t, "the capture", func() bool { r, _ := p.report(rep.ID); return r.HeldNow == 1 })
	send(t, second, reqFrame(apiProduce, 9, 1, "p2-producer", true, produceV9(7, 0)))
	if _, err := readFrame(second); err != nil {
		t.Fatal("the retry on a new connection must pass:", err)
	}
	r, _ := p.removeRule(rep.ID, true)
	if r.Records[0].Batches[0].ProducerEpoch != 7 || r.Records[0].Batches[0].Records != 2 {
		t.Fatalf("flexible batches: %+v", r.Records[0].Batches)
	}
	if _, err := readFrame(first); err != nil {
		t.Fatal("the held request must be answered after the release:", err)
	}
	waitFor(t, "the answer", func() bool { r, _ := p.report(rep.ID); return r.Records[0].Answer != nil })
	if r, _ := p.report(rep.ID); !r.Records[0].Answer.Duplicate {
		t.Fatalf("the late resend's answer is the retry's offset, a duplicate: %+v", r.Records[0].Answer)
	}
	if n := len(b.received()); n != 2 {
		t.Fatalf("the broker saw %d requests, want 2", n)
	}
}

func TestACutThrowsTheHeldRequestAwayAndResetsTheConnection(t *testing.T) {
	b := startBroker(t)
	p, addr := startProxy(t, b)
	rep, _ := p.addRule(&Rule{Name: "cut", Action: "cut", Direction: "both", APIs: []string{"EndTxn"}})
	c := dial(t, addr)
	send(t, c, reqFrame(apiEndTxn, 3, 9, "p3-producer", true, endTxnV3(55, true)))
	waitFor(t, "the capture", func() bool { r, _ := p.report(rep.ID); return r.HeldNow == 1 })
	r, _ := p.removeRule(rep.ID, true)
	if r.Discarded != 1 || r.Records[0].EndTxn == nil || !r.Records[0].EndTxn.Commit || r.Records[0].EndTxn.ProducerID != 55 {
		t.Fatalf("report: %+v", r)
	}
	_ = c.SetReadDeadline(time.Now().Add(time.Second))
	if _, err := io.ReadAll(c); err == nil {
		t.Log("the connection ended with EOF")
	}
	time.Sleep(50 * time.Millisecond)
	if n := len(b.received()); n != 0 {
		t.Fatalf("the broker saw %d requests of a cut connection", n)
	}
	if ends := p.endsSince(0); len(ends) != 1 || !ends[0].Held || ends[0].Delivered != 0 {
		t.Fatalf("EndTxn log: %+v", ends)
	}
}

func TestADelayKeepsOrderAndWaitsAtLeastItsTime(t *testing.T) {
	b := startBroker(t)
	p, addr := startProxy(t, b)
	_, _ = p.addRule(&Rule{Name: "slow", Action: "delay", DelayMs: 60, JitterMs: 30})
	c := dial(t, addr)
	sent := time.Now()
	for i := int32(1); i <= 5; i++ {
		send(t, c, reqFrame(3, 12, i, "p4-consumer", false, nil))
	}
	waitFor(t, "five requests", func() bool { return len(b.received()) == 5 })
	for i, got := range b.received() {
		if got.corr != int32(i+1) {
			t.Fatalf("out of order: %+v", b.received())
		}
		if got.at.Sub(sent) < 60*time.Millisecond {
			t.Fatalf("request %d arrived after %v, before its 60 ms", i+1, got.at.Sub(sent))
		}
	}
}

func TestAClientScopedHoldTakesTheClientsOtherConnections(t *testing.T) {
	b := startBroker(t)
	p, addr := startProxy(t, b)
	rep, _ := p.addRule(&Rule{Name: "pause", Action: "hold", Scope: "client", Client: "^p5-producer$", APIs: []string{"EndTxn"}})
	coordinator, leader, other := dial(t, addr), dial(t, addr), dial(t, addr)
	send(t, leader, reqFrame(3, 12, 1, "p5-producer", false, nil))
	if _, err := readFrame(leader); err != nil {
		t.Fatal(err)
	}
	send(t, coordinator, reqFrame(apiEndTxn, 3, 2, "p5-producer", true, endTxnV3(9, false)))
	waitFor(t, "the trigger", func() bool { r, _ := p.report(rep.ID); return r.HeldNow == 1 })
	send(t, leader, reqFrame(3, 12, 3, "p5-producer", false, nil))
	send(t, other, reqFrame(3, 12, 1, "p6-producer", false, nil))
	if _, err := readFrame(other); err != nil {
		t.Fatal("another client must pass:", err)
	}
	waitFor(t, "the second capture", func() bool { r, _ := p.report(rep.ID); return r.HeldNow == 2 })
	if n := len(b.received()); n != 2 {
		t.Fatalf("the broker saw %d requests, want 2 (one per client)", n)
	}
	p.removeRule(rep.ID, true)
	waitFor(t, "the release", func() bool { return len(b.received()) == 4 })
}

func TestATransactionalClientIsKnownByItsInitProducerId(t *testing.T) {
	b := startBroker(t)
	p, addr := startProxy(t, b)
	var e enc
	e.cstr("tx-9")
	e.i32(10000)
	e.i64(-1)
	e.i16(-1)
	e.uv(0)
	c := dial(t, addr)
	send(t, c, reqFrame(apiInitProducerID, 4, 1, "p7-producer", true, e.Bytes()))
	if _, err := readFrame(c); err != nil {
		t.Fatal(err)
	}
	s := p.stats().Clients["p7-producer"]
	if s.TransactionalID != "tx-9" || s.TimeoutMs != 10000 || s.ProducerID != 4242 || s.ProducerEpoch != 5 {
		t.Fatalf("client: %+v", s)
	}
}

func TestMarkersAreLoggedWithTheirProducerAndResult(t *testing.T) {
	b := startBroker(t)
	p, addr := startProxy(t, b)
	var e enc
	e.uv(2) // one marker
	e.i64(31)
	e.i16(4)
	e.i8(0) // abort
	e.uv(2) // one topic
	e.cstr("store-1")
	e.uv(3) // two partitions
	e.i32(0)
	e.i32(5)
	e.uv(0)
	e.i32(9) // coordinator epoch
	e.uv(0)
	e.uv(0)
	c := dial(t, addr)
	send(t, c, reqFrame(apiWriteTxnMarkers, 1, 1, "broker-2-txn-marker-sender", true, e.Bytes()))
	if _, err := readFrame(c); err != nil {
		t.Fatal(err)
	}
	m := p.markersSince(0)
	if len(m) != 1 || m[0].ProducerID != 31 || m[0].ProducerEpoch != 4 || m[0].Commit ||
		len(m[0].Partitions) != 2 || m[0].Partitions[1] != "store-1-5" || m[0].Delivered == 0 {
		t.Fatalf("markers: %+v", m)
	}
}

func TestAnAddPartitionsToTxnIsReadWithItsProducerAndItsAnswer(t *testing.T) {
	var e enc
	e.cstr("tx-2")
	e.i64(12)
	e.i16(3)
	e.uv(2) // one topic
	e.cstr("store-1")
	e.uv(3) // two partitions
	e.i32(0)
	e.i32(6)
	e.uv(0)
	e.uv(0)
	a := parseAddPartitions(3, e.Bytes())
	if a == nil || a.ProducerID != 12 || a.ProducerEpoch != 3 || len(a.Partitions) != 2 || a.Partitions[1] != "store-1-6" {
		t.Fatalf("request: %+v", a)
	}
	var r enc
	r.i32(0) // throttle
	r.uv(2)  // one topic
	r.cstr("store-1")
	r.uv(3) // two partitions
	r.i32(0)
	r.i16(0)
	r.uv(0)
	r.i32(6)
	r.i16(51) // CONCURRENT_TRANSACTIONS
	r.uv(0)
	r.uv(0)
	r.uv(0)
	if code := addPartitionsError(3, r.Bytes()); code != 51 {
		t.Fatalf("answer: %d, want 51", code)
	}
}
