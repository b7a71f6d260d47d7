package main

// wire.go: just enough of Kafka's protocol to tell requests apart (the size prefix, the
// request header, the response header) and to read the few bodies whose fields say what
// a held request was: a Produce's batches, an EndTxn's end, an InitProducerId's
// transactional id and timeout, a WriteTxnMarkers' markers. The layouts are those of
// Kafka's message definitions (clients/src/main/resources/common/message/*.json in
// apache/kafka): a "flexible" version writes compact strings and arrays (unsigned
// varint lengths plus one) and tagged fields, and its headers carry tagged fields too.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// maxFrame bounds one frame's size (Kafka's socket.request.max.bytes is 100 MiB).
const maxFrame = 100 << 20

// API keys the proxy reads bodies of or triggers on by number.
const (
	apiProduce         int16 = 0
	apiApiVersions     int16 = 18
	apiInitProducerID  int16 = 22
	apiAddPartitions   int16 = 24
	apiEndTxn          int16 = 26
	apiWriteTxnMarkers int16 = 27
)

// apiNames are Kafka's API names by key (Kafka's ApiKeys, and its protocol guide's
// table of API keys); a key past the table is named api-N.
var apiNames = []string{
	"Produce", "Fetch", "ListOffsets", "Metadata", "LeaderAndIsr", "StopReplica",
	"UpdateMetadata", "ControlledShutdown", "OffsetCommit", "OffsetFetch",
	"FindCoordinator", "JoinGroup", "Heartbeat", "LeaveGroup", "SyncGroup",
	"DescribeGroups", "ListGroups", "SaslHandshake", "ApiVersions", "CreateTopics",
	"DeleteTopics", "DeleteRecords", "InitProducerId", "OffsetForLeaderEpoch",
	"AddPartitionsToTxn", "AddOffsetsToTxn", "EndTxn", "WriteTxnMarkers",
	"TxnOffsetCommit", "DescribeAcls", "CreateAcls", "DeleteAcls", "DescribeConfigs",
	"AlterConfigs", "AlterReplicaLogDirs", "DescribeLogDirs", "SaslAuthenticate",
	"CreatePartitions", "CreateDelegationToken", "RenewDelegationToken",
	"ExpireDelegationToken", "DescribeDelegationToken", "DeleteGroups", "ElectLeaders",
	"IncrementalAlterConfigs", "AlterPartitionReassignments",
	"ListPartitionReassignments", "OffsetDelete", "DescribeClientQuotas",
	"AlterClientQuotas", "DescribeUserScramCredentials", "AlterUserScramCredentials",
	"Vote", "BeginQuorumEpoch", "EndQuorumEpoch", "DescribeQuorum", "AlterPartition",
	"UpdateFeatures", "Envelope", "FetchSnapshot", "DescribeCluster",
	"DescribeProducers", "BrokerRegistration", "BrokerHeartbeat", "UnregisterBroker",
	"DescribeTransactions", "ListTransactions", "AllocateProducerIds",
	"ConsumerGroupHeartbeat", "ConsumerGroupDescribe", "ControllerRegistration",
	"GetTelemetrySubscriptions", "PushTelemetry", "AssignReplicasToDirs",
	"ListClientMetricsResources", "DescribeTopicPartitions", "ShareGroupHeartbeat",
	"ShareGroupDescribe", "ShareFetch", "ShareAcknowledge", "AddRaftVoter",
	"RemoveRaftVoter", "UpdateRaftVoter", "InitializeShareGroupState",
	"ReadShareGroupState", "WriteShareGroupState", "DeleteShareGroupState",
	"ReadShareGroupStateSummary", "StreamsGroupHeartbeat", "StreamsGroupDescribe",
	"DescribeShareGroupOffsets", "AlterShareGroupOffsets", "DeleteShareGroupOffsets",
}

// apiName returns the name of an API key.
func apiName(key int16) string {
	if key >= 0 && int(key) < len(apiNames) {
		return apiNames[key]
	}
	return fmt.Sprintf("api-%d", key)
}

// apiKey returns the key of an API name, or false.
func apiKey(name string) (int16, bool) {
	for i, n := range apiNames {
		if n == name {
			return int16(i), true
		}
	}
	return 0, false
}

// flexibleFrom is the first flexible version of each API whose body or response the
// proxy reads (each message definition's "flexibleVersions").
var flexibleFrom = map[int16]int16{
	apiProduce:         9,
	apiInitProducerID:  2,
	apiAddPartitions:   3,
	apiEndTxn:          3,
	apiWriteTxnMarkers: 1,
}

func flexible(api, version int16) bool {
	from, ok := flexibleFrom[api]
	return ok && version >= from
}

// readFrame reads one size-prefixed frame from r; the returned bytes include the prefix.
func readFrame(r io.Reader) ([]byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return nil, err
	}
	n := int32(binary.BigEndian.Uint32(size[:]))
	if n < 0 || n > maxFrame {
		return nil, fmt.Errorf("frame of %d bytes: not Kafka's protocol", n)
	}
	frame := make([]byte, 4+int(n))
	copy(frame, size[:])
	if _, err := io.ReadFull(r, frame[4:]); err != nil {
		return nil, err
	}
	return frame, nil
}

// requestHeader is what every request says about itself.
type requestHeader struct {
	api     int16
	version int16
	corr    int32
	client  string
	body    []byte // what follows the header; nil when the header could not be read
}

// parseRequest reads a request frame's header (header v1 or v2: the client id is a
// plain nullable string in both).
func parseRequest(frame []byte) (requestHeader, error) {
	d := decoder{b: frame[4:]}
	h := requestHeader{api: d.int16(), version: d.int16(), corr: d.int32()}
	h.client = d.nullableString()
	if d.err != nil {
		return h, d.err
	}
	// Header v2 (a flexible request) ends with tagged fields; ApiVersions from v3 too.
	if flexible(h.api, h.version) || (h.api == apiApiVersions && h.version >= 3) {
		d.taggedFields()
	}
	if d.err == nil {
		h.body = d.b
	}
	return h, nil
}

// parseResponse reads a response frame's correlation id and, for an API whose responses
// are read, the body after its header.
func parseResponse(frame []byte, api, version int16) (int32, []byte) {
	d := decoder{b: frame[4:]}
	corr := d.int32()
	if flexible(api, version) {
		d.taggedFields()
	}
	if d.err != nil {
		return corr, nil
	}
	return corr, d.b
}

// errShort is a body that ends before its fields do.
var errShort = errors.New("short body")

// decoder reads Kafka's primitive types; the first error sticks and every later read
// returns zero.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) take(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || n > len(d.b) {
		d.err = errShort
		return nil
	}
	out := d.b[:n]
	d.b = d.b[n:]
	return out
}

func (d *decoder) int8() int8 {
	if b := d.take(1); b != nil {
		return int8(b[0])
	}
	return 0
}

func (d *decoder) int16() int16 {
	if b := d.take(2); b != nil {
		return int16(binary.BigEndian.Uint16(b))
	}
	return 0
}

func (d *decoder) int32() int32 {
	if b := d.take(4); b != nil {
		return int32(binary.BigEndian.Uint32(b))
	}
	return 0
}

func (d *decoder) int64() int64 {
	if b := d.take(8); b != nil {
		return int64(binary.BigEndian.Uint64(b))
	}
	return 0
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errShort
		return 0
	}
	d.b = d.b[n:]
	return v
}

// nullableString reads an int16-prefixed string (-1: null, returned as "").
func (d *decoder) nullableString() string {
	n := d.int16()
	if n < 0 {
		return ""
	}
	return string(d.take(int(n)))
}

// compactString reads a compact (nullable) string: length plus one, 0 for null.
func (d *decoder) compactString() string {
	n := d.uvarint()
	if n == 0 {
		return ""
	}
	return string(d.take(int(n - 1)))
}

// str reads a string of either encoding.
func (d *decoder) str(compact bool) string {
	if compact {
		return d.compactString()
	}
	return d.nullableString()
}

// arrayLen reads an array's length (int32, or compact: plus one); -1 for null.
func (d *decoder) arrayLen(compact bool) int {
	if compact {
		return int(d.uvarint()) - 1
	}
	return int(d.int32())
}

// bytes reads a (nullable) byte string of either encoding.
func (d *decoder) bytes(compact bool) []byte {
	var n int
	if compact {
		n = int(d.uvarint()) - 1
	} else {
		n = int(d.int32())
	}
	if n < 0 {
		return nil
	}
	return d.take(n)
}

// taggedFields skips a tagged-fields section.
func (d *decoder) taggedFields() {
	for i := d.uvarint(); i > 0 && d.err == nil; i-- {
		d.uvarint()
		d.take(int(d.uvarint()))
	}
}

// uuid reads a 16-byte UUID as hex.
func (d *decoder) uuid() string {
	if b := d.take(16); b != nil {
		return fmt.Sprintf("%x", b)
	}
	return ""
}
