package main

// bodies.go: the fields of the few requests and responses whose content a held frame's
// record names (see wire.go for the layouts' source). A body the proxy cannot read is
// forwarded all the same; its record then lacks the fields.

import "strconv"

// Batch is one record batch of a Produce request: where it goes and who wrote it.
type Batch struct {
	Topic         string `json:"topic"`
	Partition     int32  `json:"partition"`
	ProducerID    int64  `json:"producer_id"`
	ProducerEpoch int16  `json:"producer_epoch"`
	BaseSequence  int32  `json:"base_sequence"`
	Records       int32  `json:"records"`
	Transactional bool   `json:"transactional"`
}

// batchHeaderLen is a record batch's header up to and including its record count
// (Kafka's DefaultRecordBatch: baseOffset 8, length 4, leader epoch 4, magic 1, crc 4,
// attributes 2, last offset delta 4, base and max timestamps 16, producer id 8,
// producer epoch 2, base sequence 4, count 4).
const batchHeaderLen = 61

// batchesOf reads the header of every record batch (magic 2) in a partition's records.
func batchesOf(topic string, partition int32, records []byte) []Batch {
	var out []Batch
	for len(records) >= batchHeaderLen {
		d := decoder{b: records}
		d.int64() // base offset
		length := d.int32()
		d.int32() // partition leader epoch
		magic := d.int8()
		d.int32() // crc
		attributes := d.int16()
		d.int32() // last offset delta
		d.int64() // base timestamp
		d.int64() // max timestamp
		pid, epoch := d.int64(), d.int16()
		seq, count := d.int32(), d.int32()
		if d.err != nil || magic != 2 || length < batchHeaderLen-12 {
			break
		}
		out = append(out, Batch{
			Topic: topic, Partition: partition, ProducerID: pid, ProducerEpoch: epoch,
			BaseSequence: seq, Records: count, Transactional: attributes&0x10 != 0,
		})
		next := 12 + int(length)
		if next > len(records) {
			break
		}
		records = records[next:]
	}
	return out
}

// produceBatches reads a Produce request's batches (versions 3 and later; from 13 a
// topic is named by its id, given as hex).
func produceBatches(version int16, body []byte) []Batch {
	compact := flexible(apiProduce, version)
	d := decoder{b: body}
	d.str(compact) // transactional id
	d.int16()      // acks
	d.int32()      // timeout
	var out []Batch
	for t := d.arrayLen(compact); t > 0 && d.err == nil; t-- {
		var topic string
		if version >= 13 {
			topic = d.uuid()
		} else {
			topic = d.str(compact)
		}
		for p := d.arrayLen(compact); p > 0 && d.err == nil; p-- {
			partition := d.int32()
			records := d.bytes(compact)
			if compact {
				d.taggedFields()
			}
			if d.err == nil {
				out = append(out, batchesOf(topic, partition, records)...)
			}
		}
		if compact {
			d.taggedFields()
		}
	}
	return out
}

// PartitionResult is one partition's answer to a Produce.
type PartitionResult struct {
	Topic      string `json:"topic"`
	Partition  int32  `json:"partition"`
	Error      int16  `json:"error"`
	BaseOffset int64  `json:"base_offset"`
}

// produceResults reads a Produce response's per-partition errors and base offsets.
func produceResults(version int16, body []byte) []PartitionResult {
	compact := flexible(apiProduce, version)
	d := decoder{b: body}
	var out []PartitionResult
	for t := d.arrayLen(compact); t > 0 && d.err == nil; t-- {
		var topic string
		if version >= 13 {
			topic = d.uuid()
		} else {
			topic = d.str(compact)
		}
		for p := d.arrayLen(compact); p > 0 && d.err == nil; p-- {
			r := PartitionResult{Topic: topic, Partition: d.int32(), Error: d.int16(), BaseOffset: d.int64()}
			if version >= 2 {
				d.int64() // log append time
			}
			if version >= 5 {
				d.int64() // log start offset
			}
			if version >= 8 {
				for e := d.arrayLen(compact); e > 0 && d.err == nil; e-- {
					d.int32()
					d.str(compact)
					if compact {
						d.taggedFields()
					}
				}
				d.str(compact) // error message
			}
			if compact {
				d.taggedFields()
			}
			if d.err == nil {
				out = append(out, r)
			}
		}
		if compact {
			d.taggedFields()
		}
	}
	return out
}

// EndTxn is what an EndTxn request asks: to commit or abort a producer's transaction.
type EndTxn struct {
	TransactionalID string `json:"transactional_id"`
	ProducerID      int64  `json:"producer_id"`
	ProducerEpoch   int16  `json:"producer_epoch"`
	Commit          bool   `json:"commit"`
}

func parseEndTxn(version int16, body []byte) *EndTxn {
	d := decoder{b: body}
	e := EndTxn{TransactionalID: d.str(flexible(apiEndTxn, version))}
	e.ProducerID, e.ProducerEpoch, e.Commit = d.int64(), d.int16(), d.int8() != 0
	if d.err != nil {
		return nil
	}
	return &e
}

// errorAfterThrottle reads the error code of a response that starts with its throttle
// time (EndTxn's and InitProducerId's); -1 when unreadable.
func errorAfterThrottle(body []byte) int16 {
	d := decoder{b: body}
	d.int32()
	code := d.int16()
	if d.err != nil {
		return -1
	}
	return code
}

// AddPartitions is what a client's AddPartitionsToTxn request (versions 0 to 3; brokers
// send 4 and later) asks: to add partitions to its producer's transaction.
type AddPartitions struct {
	TransactionalID string   `json:"transactional_id"`
	ProducerID      int64    `json:"producer_id"`
	ProducerEpoch   int16    `json:"producer_epoch"`
	Partitions      []string `json:"partitions"`
}

func parseAddPartitions(version int16, body []byte) *AddPartitions {
	if version > 3 {
		return nil
	}
	compact := flexible(apiAddPartitions, version)
	d := decoder{b: body}
	a := AddPartitions{TransactionalID: d.str(compact), ProducerID: d.int64(), ProducerEpoch: d.int16()}
	for t := d.arrayLen(compact); t > 0 && d.err == nil; t-- {
		topic := d.str(compact)
		for p := d.arrayLen(compact); p > 0 && d.err == nil; p-- {
			a.Partitions = append(a.Partitions, topic+"-"+strconv.Itoa(int(d.int32())))
		}
		if compact {
			d.taggedFields()
		}
	}
	if d.err != nil {
		return nil
	}
	return &a
}

// addPartitionsError reads an AddPartitionsToTxn response (versions 0 to 3): the
// first partition's error that is not NONE, else NONE; -1 when unreadable.
func addPartitionsError(version int16, body []byte) int16 {
	compact := flexible(apiAddPartitions, version)
	d := decoder{b: body}
	d.int32() // throttle
	found := int16(0)
	for t := d.arrayLen(compact); t > 0 && d.err == nil; t-- {
		d.str(compact)
		for p := d.arrayLen(compact); p > 0 && d.err == nil; p-- {
			d.int32()
			if code := d.int16(); code != 0 && found == 0 {
				found = code
			}
			if compact {
				d.taggedFields()
			}
		}
		if compact {
			d.taggedFields()
		}
	}
	if d.err != nil {
		return -1
	}
	return found
}

// InitProducer is what an InitProducerId request says of a transactional producer.
type InitProducer struct {
	TransactionalID string `json:"transactional_id"`
	TimeoutMs       int32  `json:"transaction_timeout_ms"`
}

func parseInitProducer(version int16, body []byte) *InitProducer {
	d := decoder{b: body}
	i := InitProducer{TransactionalID: d.str(flexible(apiInitProducerID, version)), TimeoutMs: d.int32()}
	if d.err != nil {
		return nil
	}
	return &i
}

// initProducerAnswer reads an InitProducerId response: error, producer id and epoch.
func initProducerAnswer(body []byte) (int16, int64, int16, bool) {
	d := decoder{b: body}
	d.int32()
	code, pid, epoch := d.int16(), d.int64(), d.int16()
	return code, pid, epoch, d.err == nil
}

// Marker is one transaction marker a coordinator asks a partition leader to write.
type Marker struct {
	ProducerID    int64    `json:"producer_id"`
	ProducerEpoch int16    `json:"producer_epoch"`
	Commit        bool     `json:"commit"`
	Partitions    []string `json:"partitions"`
}

// parseMarkers reads a WriteTxnMarkers request's markers (versions 0 to 2).
func parseMarkers(version int16, body []byte) []Marker {
	compact := flexible(apiWriteTxnMarkers, version)
	d := decoder{b: body}
	var out []Marker
	for m := d.arrayLen(compact); m > 0 && d.err == nil; m-- {
		mk := Marker{ProducerID: d.int64(), ProducerEpoch: d.int16(), Commit: d.int8() != 0}
		for t := d.arrayLen(compact); t > 0 && d.err == nil; t-- {
			topic := d.str(compact)
			for p := d.arrayLen(compact); p > 0 && d.err == nil; p-- {
				mk.Partitions = append(mk.Partitions, topic+"-"+strconv.Itoa(int(d.int32())))
			}
			if compact {
				d.taggedFields()
			}
		}
		d.int32() // coordinator epoch
		if version >= 2 {
			d.int8() // transaction version
		}
		if compact {
			d.taggedFields()
		}
		if d.err == nil {
			out = append(out, mk)
		}
	}
	return out
}
