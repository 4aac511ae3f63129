package kafka

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// progressIdle is how long reading the progress topic waits for more
// records before it takes the end as reached: the records it has not seen
// below the last stable offset are then those of aborted transactions,
// which a read_committed fetch skips without returning anything.
const progressIdle = 3 * time.Second

// readProgress returns the last epoch the sink's committed progress
// records name (0 if none): it creates the progress topic if it does not
// exist (compacted, one partition), then reads it read_committed from the
// start to the last stable offset of each partition (see stableEnds). The sink's own
// transactions must be finished (connect calls it after InitProducerID),
// so that their outcome is below the last stable offset.
func readProgress(ctx context.Context, cl *kgo.Client, cfg *SinkConfig) (uint64, error) {
	topic := cfg.ProgressTopic
	if err := createProgressTopic(ctx, cl, topic); err != nil {
		return 0, err
	}
	starts, err := listOffsets(ctx, cl, topic, -2, 0)
	if err != nil {
		return 0, err
	}
	ends, err := stableEnds(ctx, cl, topic)
	if err != nil {
		return 0, err
	}
	from := map[int32]kgo.Offset{}
	for p, end := range ends {
		if end > starts[p] {
			from[p] = kgo.NewOffset().At(starts[p])
		}
	}
	if len(from) == 0 {
		return 0, nil
	}
	sec, err := cfg.Security.ClientOpts()
	if err != nil {
		return 0, err
	}
	cons, err := kgo.NewClient(append(sec,
		kgo.SeedBrokers(cfg.Brokers...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: from}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.KeepControlRecords(),
	)...)
	if err != nil {
		return 0, err
	}
	defer cons.Close()
	var epoch uint64
	key := []byte(cfg.TransactionalID)
	for len(from) > 0 {
		pctx, cancel := context.WithTimeout(ctx, progressIdle)
		fs := cons.PollFetches(pctx)
		cancel()
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		if fs.IsClientClosed() {
			return 0, fmt.Errorf("client closed")
		}
		var fetchErr error
		fs.EachError(func(_ string, _ int32, err error) {
			if err != context.DeadlineExceeded && fetchErr == nil {
				fetchErr = err
			}
		})
		if fetchErr != nil {
			return 0, fetchErr
		}
		if fs.NumRecords() == 0 {
			break // idle: the rest below the ends is aborted
		}
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset+1 >= ends[r.Partition] {
				delete(from, r.Partition)
			}
			if r.Attrs.IsControl() || !bytes.Equal(r.Key, key) {
				return
			}
			if e, err := strconv.ParseUint(string(r.Value), 10, 64); err == nil && e > epoch {
				epoch = e
			}
		})
	}
	return epoch, nil
}

// stableEnds returns the last stable offset of each partition of topic
// once it has reached the high watermark of the call. The sink's own
// progress records are below that high watermark, but other sinks'
// transactions still open then would hold the last stable offset below
// some of them; every transaction ends (commits, or aborts at its
// timeout), so waiting for the last stable offset to pass the high
// watermark sees all of ours.
func stableEnds(ctx context.Context, cl *kgo.Client, topic string) (map[int32]int64, error) {
	hw, err := listOffsets(ctx, cl, topic, -1, 0)
	if err != nil {
		return nil, err
	}
	for delay := 10 * time.Millisecond; ; delay = min(2*delay, time.Second) {
		lso, err := listOffsets(ctx, cl, topic, -1, 1)
		if err != nil {
			return nil, err
		}
		behind := false
		for p, h := range hw {
			behind = behind || lso[p] < h
		}
		if !behind {
			return lso, nil
		}
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for open transactions on %s to end: %w", topic, ctx.Err())
		}
	}
}

// createProgressTopic creates topic, compacted with one partition, unless
// it exists.
func createProgressTopic(ctx context.Context, cl *kgo.Client, topic string) error {
	req := kmsg.NewPtrCreateTopicsRequest()
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic, t.NumPartitions, t.ReplicationFactor = topic, 1, -1
	policy := "compact"
	c := kmsg.NewCreateTopicsRequestTopicConfig()
	c.Name, c.Value = "cleanup.policy", &policy
	t.Configs = append(t.Configs, c)
	req.Topics = append(req.Topics, t)
	req.TimeoutMillis = 10000
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return err
	}
	for _, rt := range resp.Topics {
		if err := kerr.ErrorForCode(rt.ErrorCode); err != nil && err != kerr.TopicAlreadyExists {
			return fmt.Errorf("creating %s: %w", topic, err)
		}
	}
	return nil
}

// listOffsets returns the offsets of every partition of topic at ts (-2:
// the log start, -1: the end) for isolation level isolation (for the end,
// 0: the high watermark, 1: the last stable offset).
func listOffsets(ctx context.Context, cl *kgo.Client, topic string, ts int64, isolation int8) (map[int32]int64, error) {
	meta := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr(topic)
	meta.Topics = append(meta.Topics, mt)
	mresp, err := meta.RequestWith(ctx, cl)
	if err != nil {
		return nil, err
	}
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID, req.IsolationLevel = -1, isolation
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	for _, t := range mresp.Topics {
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			return nil, fmt.Errorf("metadata of %s: %w", topic, err)
		}
		for _, p := range t.Partitions {
			rp := kmsg.NewListOffsetsRequestTopicPartition()
			rp.Partition, rp.Timestamp, rp.CurrentLeaderEpoch = p.Partition, ts, -1
			rt.Partitions = append(rt.Partitions, rp)
		}
	}
	if len(rt.Partitions) == 0 {
		return nil, fmt.Errorf("topic %s has no partitions", topic)
	}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, err
	}
	out := map[int32]int64{}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return nil, fmt.Errorf("offsets of %s[%d]: %w", topic, p.Partition, err)
			}
			out[p.Partition] = p.Offset
		}
	}
	return out, nil
}
