// Package kafkatest helps tests of the Kafka sink: an in-process broker
// (kfake, with transactions), a read_committed reader of a whole topic,
// and folds of the records a sink wrote into the rows they describe.
package kafkatest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Cluster starts an in-process Kafka cluster of one broker with the given
// topics (partitions each), closed at the end of the test, and returns it
// and its bootstrap address.
func Cluster(t testing.TB, partitions int32, topics ...string) (*kfake.Cluster, string) {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, topics...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c, strings.Join(c.ListenAddrs(), ",")
}

// Record is a consumed record.
type Record struct {
	Partition  int32
	Offset     int64
	Key, Value []byte // Value nil for a tombstone
}

// ReadAll reads every committed record of topic (read_committed), up to
// the last stable offset of each partition at the call.
func ReadAll(ctx context.Context, brokers, topic string) ([]Record, error) {
	admin, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...))
	if err != nil {
		return nil, err
	}
	defer admin.Close()
	ends, err := endOffsets(ctx, admin, topic)
	if err != nil {
		return nil, err
	}
	from := map[int32]kgo.Offset{}
	for p, end := range ends {
		if end > 0 {
			from[p] = kgo.NewOffset().AtStart()
		}
	}
	if len(from) == 0 {
		return nil, nil
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: from}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords())
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	var out []Record
	for len(from) > 0 {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		fs := cl.PollFetches(pctx)
		cancel()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if fs.NumRecords() == 0 {
			break // what is left below the ends was aborted
		}
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset+1 >= ends[r.Partition] {
				delete(from, r.Partition)
			}
			if !r.Attrs.IsControl() {
				out = append(out, Record{Partition: r.Partition, Offset: r.Offset, Key: r.Key, Value: r.Value})
			}
		})
	}
	return out, nil
}

func endOffsets(ctx context.Context, cl *kgo.Client, topic string) (map[int32]int64, error) {
	meta := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr(topic)
	meta.Topics = append(meta.Topics, mt)
	mresp, err := meta.RequestWith(ctx, cl)
	if err != nil {
		return nil, err
	}
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID, req.IsolationLevel = -1, 1
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	for _, t := range mresp.Topics {
		for _, p := range t.Partitions {
			rp := kmsg.NewListOffsetsRequestTopicPartition()
			rp.Partition, rp.Timestamp, rp.CurrentLeaderEpoch = p.Partition, -1, -1
			rt.Partitions = append(rt.Partitions, rp)
		}
	}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, err
	}
	out := map[int32]int64{}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			out[p.Partition] = p.Offset
		}
	}
	return out, nil
}

// FoldUpsert folds FORMAT UPSERT records: the last value of each key, a
// tombstone removing it. It returns the values, sorted.
func FoldUpsert(recs []Record) []string {
	m := map[string]string{}
	for _, r := range recs {
		if r.Value == nil {
			delete(m, string(r.Key))
		} else {
			m[string(r.Key)] = string(r.Value)
		}
	}
	return sortedValues(m)
}

// FoldDebezium folds FORMAT DEBEZIUM records strictly, as a consumer that
// must see every change exactly once: a create of a row that exists, an
// update or delete whose before is not the current row, fails. Rows are
// identified by their whole JSON value, so the view's rows must be
// distinct. It returns the rows, sorted (as canonical JSON).
func FoldDebezium(recs []Record) ([]string, error) {
	count := map[string]int{}
	for _, r := range recs {
		var ev struct {
			Before, After json.RawMessage
			Op            string
		}
		if err := json.Unmarshal(r.Value, &ev); err != nil {
			return nil, fmt.Errorf("offset %d: %v: %s", r.Offset, err, r.Value)
		}
		before, after := canonical(ev.Before), canonical(ev.After)
		switch ev.Op {
		case "c":
			if count[after] > 0 {
				return nil, fmt.Errorf("partition %d offset %d: create of a row already there (a duplicate): %s", r.Partition, r.Offset, after)
			}
			count[after]++
		case "u", "d":
			if count[before] == 0 {
				return nil, fmt.Errorf("partition %d offset %d: %s of a row not there (a duplicate or a lost change): %s", r.Partition, r.Offset, ev.Op, before)
			}
			if count[before]--; count[before] == 0 {
				delete(count, before)
			}
			if ev.Op == "u" {
				if count[after] > 0 {
					return nil, fmt.Errorf("partition %d offset %d: update to a row already there: %s", r.Partition, r.Offset, after)
				}
				count[after]++
			}
		default:
			return nil, fmt.Errorf("offset %d: op %q", r.Offset, ev.Op)
		}
	}
	var out []string
	for k := range count {
		out = append(out, k)
	}
	sort.Strings(out)
	return out, nil
}

// canonical returns a JSON value re-encoded with sorted keys ("null" for
// none).
func canonical(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "null"
	}
	var v any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// Canonical is canonical for tests that build the rows they expect.
func Canonical(s string) string { return canonical(json.RawMessage(s)) }

func sortedValues(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, canonical(json.RawMessage(v)))
	}
	sort.Strings(out)
	return out
}
