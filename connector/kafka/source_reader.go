package kafka

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/streamsql/streamsql/sqlerr"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// connectionFailure is SQLSTATE 08001 (sqlclient_unable_to_establish_sqlconnection),
// which streamsql reports for a broker it cannot reach.
const connectionFailure = "08001"

// CheckTimeout bounds the metadata check of CheckSource.
const CheckTimeout = 5 * time.Second

// CheckSource checks, within CheckTimeout, that o's brokers answer and
// that its topic exists: the check CREATE SOURCE makes. Errors are 08001
// with the brokers' addresses, or 22023 for a missing topic.
func CheckSource(ctx context.Context, o *SourceOptions) error {
	ctx, cancel := context.WithTimeout(ctx, CheckTimeout)
	defer cancel()
	sec, err := o.Security.ClientOpts()
	if err != nil {
		return err
	}
	cl, err := kgo.NewClient(append(sec, kgo.SeedBrokers(o.Brokers...), kgo.DialTimeout(CheckTimeout), kgo.RequestRetries(1))...)
	if err != nil {
		return invalidValue("properties.bootstrap.server '%s': %v", strings.Join(o.Brokers, ","), err)
	}
	defer cl.Close()
	_, err = partitions(ctx, kadm.NewClient(cl), o)
	return err
}

// CheckBrokers checks, within CheckTimeout, that brokers answer a client
// that connects as sec says: the check CREATE SINK makes. Errors are 08001
// with the brokers' addresses, or 22023 for bad security options.
func CheckBrokers(ctx context.Context, brokers []string, sec Security) error {
	ctx, cancel := context.WithTimeout(ctx, CheckTimeout)
	defer cancel()
	opts, err := sec.ClientOpts()
	if err != nil {
		return err
	}
	cl, err := kgo.NewClient(append(opts, kgo.SeedBrokers(brokers...), kgo.DialTimeout(CheckTimeout), kgo.RequestRetries(1))...)
	if err != nil {
		return invalidValue("properties.bootstrap.server '%s': %v", strings.Join(brokers, ","), err)
	}
	defer cl.Close()
	if _, err := kadm.NewClient(cl).BrokerMetadata(ctx); err != nil {
		return sqlerr.New(connectionFailure, "cannot reach the Kafka brokers at %s: %v", strings.Join(brokers, ","), err)
	}
	return nil
}

// partitions returns the topic's partitions, sorted.
func partitions(ctx context.Context, adm *kadm.Client, o *SourceOptions) ([]int32, error) {
	topic := o.Topic
	md, err := adm.Metadata(ctx, topic)
	if err != nil {
		return nil, sqlerr.New(connectionFailure, "cannot reach the Kafka brokers at %s: %v", strings.Join(o.Brokers, ","), err)
	}
	t, ok := md.Topics[topic]
	if !ok || errors.Is(t.Err, kerr.UnknownTopicOrPartition) {
		return nil, invalidValue("Kafka topic \"%s\" does not exist", topic)
	}
	if t.Err != nil {
		return nil, sqlerr.New(connectionFailure, "Kafka topic \"%s\": %v", topic, t.Err)
	}
	ps := make([]int32, 0, len(t.Partitions))
	for p := range t.Partitions {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
	return ps, nil
}

// Reader consumes a topic's partitions from offsets its caller gives, with
// no consumer group: the caller keeps the offsets (in its checkpoints).
// The broker going away is retried by the client, with backoff. A Reader
// is safe for concurrent use by one poller and one caller of Refresh.
type Reader struct {
	o   *SourceOptions
	cl  *kgo.Client
	adm *kadm.Client
}

// NewReader returns a reader of o's topic that consumes no partition yet.
func NewReader(o *SourceOptions) (*Reader, error) {
	sec, err := o.Security.ClientOpts()
	if err != nil {
		return nil, err
	}
	cl, err := kgo.NewClient(append(sec, kgo.SeedBrokers(o.Brokers...),
		kgo.FetchMaxWait(100*time.Millisecond),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{o.Topic: {}}),
		kgo.RetryBackoffFn(func(tries int) time.Duration { return min(time.Duration(tries)*100*time.Millisecond, 2*time.Second) }))...)
	if err != nil {
		return nil, invalidValue("properties.bootstrap.server '%s': %v", strings.Join(o.Brokers, ","), err)
	}
	return &Reader{o: o, cl: cl, adm: kadm.NewClient(cl)}, nil
}

// Close closes the reader; a Poll under way returns.
func (r *Reader) Close() { r.cl.Close() }

// Discover returns the topic's partitions missing from known with the
// offset each starts at: where the startup mode says if first (the source
// has no committed offsets), else at its beginning (a partition added to
// the topic after the source started reading it).
func (r *Reader) Discover(ctx context.Context, known map[int32]int64, first bool) (map[int32]int64, error) {
	ps, err := partitions(ctx, r.adm, r.o)
	if err != nil {
		return nil, err
	}
	var missing []int32
	for _, p := range ps {
		if _, ok := known[p]; !ok {
			missing = append(missing, p)
		}
	}
	if len(missing) == 0 {
		return nil, nil
	}
	var listed kadm.ListedOffsets
	switch {
	case first && r.o.Startup == StartLatest:
		listed, err = r.adm.ListEndOffsets(ctx, r.o.Topic)
	case first && r.o.Startup == StartTimestamp:
		listed, err = r.adm.ListOffsetsAfterMilli(ctx, r.o.StartMillis, r.o.Topic)
	default:
		listed, err = r.adm.ListStartOffsets(ctx, r.o.Topic)
	}
	if err == nil {
		err = listed.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("kafka: listing the offsets of topic %s: %v", r.o.Topic, err)
	}
	found := map[int32]int64{}
	for _, p := range missing {
		l, ok := listed.Lookup(r.o.Topic, p)
		if !ok || l.Offset < 0 {
			// A partition without offsets yet (just created): its beginning.
			found[p] = 0
			continue
		}
		found[p] = l.Offset
	}
	return found, nil
}

// Consume adds partitions to consume, each from its offset.
func (r *Reader) Consume(from map[int32]int64) {
	if len(from) == 0 {
		return
	}
	offs := make(map[int32]kgo.Offset, len(from))
	for p, o := range from {
		offs[p] = kgo.NewOffset().At(o)
	}
	r.cl.AddConsumePartitions(map[string]map[int32]kgo.Offset{r.o.Topic: offs})
}

// Fetch is what one Poll returns.
type Fetch struct {
	// Records are in offset order within each partition.
	Records []*kgo.Record
	// HighWatermarks are the partitions' high watermarks the fetch saw.
	HighWatermarks map[int32]int64
	// Err is a fetch error the client retries (the broker is away), or nil.
	Err error
}

// Poll waits for records until ctx is done and returns at most max of
// them.
func (r *Reader) Poll(ctx context.Context, max int) Fetch {
	fs := r.cl.PollRecords(ctx, max)
	f := Fetch{HighWatermarks: map[int32]int64{}}
	fs.EachPartition(func(p kgo.FetchTopicPartition) {
		if p.Err == nil {
			f.HighWatermarks[p.Partition] = p.HighWatermark
		}
	})
	for _, e := range fs.Errors() {
		if !errors.Is(e.Err, context.DeadlineExceeded) && !errors.Is(e.Err, context.Canceled) && !errors.Is(e.Err, kgo.ErrClientClosed) {
			f.Err = fmt.Errorf("kafka: topic %s partition %d: %v", e.Topic, e.Partition, e.Err)
		}
	}
	f.Records = fs.Records()
	return f
}

// HighWatermarks lists the end offsets of the topic's partitions.
func (r *Reader) HighWatermarks(ctx context.Context) (map[int32]int64, error) {
	listed, err := r.adm.ListEndOffsets(ctx, r.o.Topic)
	if err != nil {
		return nil, err
	}
	hw := map[int32]int64{}
	listed.Each(func(l kadm.ListedOffset) {
		if l.Err == nil {
			hw[l.Partition] = l.Offset
		}
	})
	return hw, nil
}
