package engine

import (
	"context"
	"encoding/binary"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/connector/kafka"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/state"
	"github.com/twmb/franz-go/pkg/kgo"
)

// kafkaReader is one view's reader of a Kafka source. The topic's
// partitions are its splits: it records the next offset of each partition
// at every barrier and, after a restart, consumes each partition from its
// committed offset, so the view counts every message once. Decoding a
// fetch and injecting a barrier both hold mu, so a barrier's offsets are
// exactly those of the messages sent before it.
//
// The reader connects in the background: while the brokers are away it
// reads nothing and barriers pass with the last offsets, so the view keeps
// its committed state and goes on where it was when they come back. A
// message that does not decode is skipped and counted; with error.policy
// = 'fail' the reader stops reading and fails the view instead (barriers
// still pass, so other views are not held up).
type kafkaReader struct {
	e      *Engine
	rel    *catalog.Relation
	view   uint32
	opts   *kafka.SourceOptions
	out    chan<- exec.Message
	offset *state.Table
	fail   func(error)

	mu   sync.Mutex
	bb   *kafka.BatchBuilder
	next map[int32]int64 // per partition, the next offset to read
	hwm  map[int32]int64 // per partition, the last high watermark seen
	// consumed are the partitions this run's client consumes.
	consumed map[int32]bool
	paused   bool
	failed   error
	bad      int64 // messages skipped, counted into the checkpoint
	// wms generate the watermark of each partition (sources with
	// WATERMARK FOR): each partition is in its own event-time order, so the
	// source's watermark is the least of the partitions that have one.
	// wmExpr makes the generator of a partition met for the first time.
	wms    map[int32]*exec.WatermarkGen
	wmExpr ir.Expr
	wmSent sentWatermark
	// part is the partition of the rows in bb (a batch holds one partition's).
	part int32

	rows   atomic.Int64
	stop   chan struct{}
	done   chan struct{}
	cancel context.CancelFunc
	ctx    context.Context
}

// Keys of a Kafka reader's offset table: a partition's next offset is under
// kafkaPartitionKey + the partition (4 bytes, big endian), the count of bad
// messages under kafkaBadKey, a partition's watermark under
// kafkaWatermarkKey(p).
var (
	kafkaPartitionKey = []byte("p")
	kafkaBadKey       = []byte("bad")
)

func kafkaWatermarkKey(p int32) []byte {
	return binary.BigEndian.AppendUint32(append([]byte(nil), watermarkKey...), uint32(p))
}

func kafkaOffsetKey(p int32) []byte {
	return binary.BigEndian.AppendUint32(append([]byte(nil), kafkaPartitionKey...), uint32(p))
}

// kafkaColumns lists a source's visible columns.
func kafkaColumns(rel *catalog.Relation) []kafka.Column {
	var cols []kafka.Column
	for _, c := range rel.Columns {
		if !c.Hidden {
			cols = append(cols, kafka.Column{Name: c.Name, Type: c.Type})
		}
	}
	return cols
}

func newKafkaReader(e *Engine, rel *catalog.Relation, view *catalog.Relation, table *state.Table, out chan<- exec.Message, fail func(error)) (*kafkaReader, error) {
	opts, err := kafka.ParseSourceOptions(rel.Options)
	if err != nil {
		return nil, err
	}
	bb, err := kafka.NewBatchBuilder(e.mem, opts, kafkaColumns(rel))
	if err != nil {
		return nil, err
	}
	r := &kafkaReader{e: e, rel: rel, view: view.ID, opts: opts, out: out, offset: table, fail: fail, bb: bb,
		next: map[int32]int64{}, hwm: map[int32]int64{}, consumed: map[int32]bool{}, paused: view.Paused,
		stop: make(chan struct{}), done: make(chan struct{})}
	r.ctx, r.cancel = context.WithCancel(e.ctx)
	if err := r.load(); err != nil {
		bb.Release()
		return nil, err
	}
	if rel.Watermark != nil {
		if r.wmExpr, err = sql.BindWatermark(rel); err == nil {
			err = r.loadWatermarks()
		}
		if err != nil {
			bb.Release()
			return nil, err
		}
	}
	return r, nil
}

// load reads the committed offsets and count of bad messages.
func (r *kafkaReader) load() error {
	var err error
	r.next, r.bad, err = loadKafkaOffsets(r.offset, "a reader of source "+r.rel.Name)
	return err
}

// loadKafkaOffsets reads the committed per-partition offsets and count of
// bad messages of a Kafka reader (of a view or of a table: what names it,
// for errors) from its offset table.
func loadKafkaOffsets(offset *state.Table, what string) (next map[int32]int64, bad int64, err error) {
	next = map[int32]int64{}
	it, err := offset.NewIter(kafkaPartitionKey, []byte("q"))
	if err != nil {
		return nil, 0, err
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		k, v := it.Key(), it.Value()
		n, m := binary.Varint(v)
		if len(k) != len(kafkaPartitionKey)+4 || m <= 0 {
			return nil, 0, fmt.Errorf("engine: corrupt offset of %s", what)
		}
		next[int32(binary.BigEndian.Uint32(k[len(kafkaPartitionKey):]))] = n
	}
	if err := it.Error(); err != nil {
		return nil, 0, err
	}
	v, ok, err := offset.Get(kafkaBadKey)
	if err != nil || !ok {
		return next, 0, err
	}
	bad, _ = binary.Varint(v)
	return next, bad, nil
}

// loadWatermarks restores the partitions' watermark generators.
func (r *kafkaReader) loadWatermarks() error {
	r.wms = map[int32]*exec.WatermarkGen{}
	hi := append(append([]byte(nil), watermarkKey...), 0xff, 0xff, 0xff, 0xff, 0xff)
	it, err := r.offset.NewIter(watermarkKey, hi)
	if err != nil {
		return err
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		k := it.Key()
		if len(k) != len(watermarkKey)+4 {
			return fmt.Errorf("engine: corrupt watermark of a reader of source %s", r.rel.Name)
		}
		g, err := r.watermarkGen(int32(binary.BigEndian.Uint32(k[len(watermarkKey):])))
		if err != nil {
			return err
		}
		if err := g.LoadState(it.Value()); err != nil {
			return err
		}
	}
	return it.Error()
}

// watermarkGen returns partition p's watermark generator, making it if
// needed.
func (r *kafkaReader) watermarkGen(p int32) (*exec.WatermarkGen, error) {
	if g, ok := r.wms[p]; ok {
		return g, nil
	}
	g, err := exec.NewWatermarkGen(r.rel.Watermark.Column, r.wmExpr)
	if err != nil {
		return nil, err
	}
	r.wms[p] = g
	return g, nil
}

// watermark returns the least watermark of the partitions, or false while
// a partition that has messages left (or may have: its high watermark is
// not known yet) has none. A partition without a watermark and nothing to
// read holds nothing back. (Called with mu held.)
func (r *kafkaReader) watermark() (*barrier.Watermark, bool) {
	var least *barrier.Watermark
	for p, next := range r.next {
		g := r.wms[p]
		wm, ok := (*barrier.Watermark)(nil), false
		if g != nil {
			wm, ok = g.Current()
		}
		if !ok {
			if h, known := r.hwm[p]; !known || next < h {
				return nil, false
			}
			continue
		}
		if least == nil || wm.Value < least.Value {
			least = wm
		}
	}
	return least, least != nil
}

// Inject records the offsets for the epoch and sends the barrier.
func (r *kafkaReader) Inject(ctx context.Context, b *barrier.Barrier) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for p, n := range r.next {
		r.offset.Put(kafkaOffsetKey(p), binary.AppendVarint(nil, n))
	}
	r.offset.Put(kafkaBadKey, binary.AppendVarint(nil, r.bad))
	for p, g := range r.wms {
		if _, ok := g.Current(); ok {
			r.offset.Put(kafkaWatermarkKey(p), g.AppendState(nil))
		}
	}
	wm, _ := r.watermark()
	if wm != nil && r.wmSent.ok && wm.Value < r.wmSent.value {
		// A partition found later may be behind: the source's watermark
		// does not go back.
		wm = &barrier.Watermark{Column: wm.Column, Value: r.wmSent.value}
	}
	if err := endEpoch(r.offset, b, wm, r.send); err != nil {
		return err
	}
	r.paused = viewPausedAfter(b, r.view, r.paused)
	return nil
}

// send delivers m unless the reader is stopping.
func (r *kafkaReader) send(m exec.Message) error {
	return sendUnlessStopped(r.e.ctx, r.stop, r.out, m)
}

// run consumes the topic until the reader stops; partitions are
// discovered on a goroutine of their own, so that a slow metadata request
// does not hold up fetching.
func (r *kafkaReader) run() {
	defer close(r.done)
	defer r.bb.Release()
	rd, err := kafka.NewReader(r.opts)
	if err != nil {
		r.setFailed(err)
		return
	}
	defer rd.Close()
	discovered := make(chan struct{})
	go func() {
		defer close(discovered)
		r.discoverLoop(rd)
	}()
	defer func() { <-discovered }()
	go func() {
		select {
		case <-r.stop:
		case <-r.e.ctx.Done():
		}
		r.cancel()
	}()
	var lastErr time.Time
	for r.ctx.Err() == nil {
		r.mu.Lock()
		idle := r.paused || r.failed != nil
		r.mu.Unlock()
		if idle {
			r.sleep(100 * time.Millisecond)
			continue
		}
		if !r.e.awaitStateRoom(r.stop) {
			return
		}
		ctx, cancel := context.WithTimeout(r.ctx, 500*time.Millisecond)
		f := rd.Poll(ctx, exec.BatchSize)
		cancel()
		if f.Err != nil && time.Since(lastErr) > 10*time.Second {
			r.e.log.Warn("kafka source: fetching", "source", r.rel.Name, "err", f.Err)
			lastErr = time.Now()
		}
		if err := r.deliver(f); err != nil {
			return
		}
	}
}

// discoverLoop looks for new partitions every opts.Discovery (every
// second while the brokers do not answer) until the reader stops.
func (r *kafkaReader) discoverLoop(rd *kafka.Reader) {
	var lastErr time.Time
	for r.ctx.Err() == nil {
		wait := r.opts.Discovery
		if err := r.discover(rd); err != nil {
			if r.ctx.Err() != nil {
				return
			}
			if time.Since(lastErr) > 10*time.Second {
				r.e.log.Warn("kafka source: looking for partitions", "source", r.rel.Name, "topic", r.opts.Topic, "err", err)
				lastErr = time.Now()
			}
			wait = min(wait, time.Second)
		}
		r.sleep(wait)
	}
}

// sleep waits d or until the reader stops.
func (r *kafkaReader) sleep(d time.Duration) {
	select {
	case <-time.After(d):
	case <-r.ctx.Done():
	}
}

// discover adds the topic's partitions that the reader does not know yet
// (at the startup mode's offsets on the first run, else from their
// beginning), and consumes every known partition that this run does not
// consume yet from its next offset. (Called by discoverLoop only.)
func (r *kafkaReader) discover(rd *kafka.Reader) error {
	r.mu.Lock()
	known := make(map[int32]int64, len(r.next))
	for p, n := range r.next {
		known[p] = n
	}
	r.mu.Unlock()
	found, err := rd.Discover(r.ctx, known, len(known) == 0)
	if err != nil {
		return err
	}
	r.mu.Lock()
	for p, n := range found {
		r.next[p] = n
	}
	start := map[int32]int64{}
	for p, n := range r.next {
		if !r.consumed[p] {
			r.consumed[p] = true
			start[p] = n
		}
	}
	r.mu.Unlock()
	rd.Consume(start)
	// The high watermarks, for the lag of partitions that fetch nothing.
	if hw, err := rd.HighWatermarks(r.ctx); err == nil {
		r.mu.Lock()
		for p, h := range hw {
			r.hwm[p] = max(r.hwm[p], h)
		}
		r.mu.Unlock()
	}
	return nil
}

// deliver decodes a fetch into batches and sends them.
func (r *kafkaReader) deliver(f kafka.Fetch) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for p, h := range f.HighWatermarks {
		r.hwm[p] = h
	}
	for _, rec := range f.Records {
		next, ok := r.next[rec.Partition]
		if !ok || rec.Offset < next || r.failed != nil {
			continue // not ours, or already read (a refetch after a seek)
		}
		r.next[rec.Partition] = rec.Offset + 1
		if rec.Partition != r.part {
			if err := r.flush(); err != nil {
				return err
			}
			r.part = rec.Partition
		}
		if err := r.bb.Add(rec); err != nil {
			r.badMessage(rec, err)
			continue
		}
		if r.bb.Rows() >= exec.BatchSize {
			if err := r.flush(); err != nil {
				return err
			}
		}
	}
	return r.flush()
}

// badMessage skips (and counts) or fails on a message that did not decode.
func (r *kafkaReader) badMessage(rec *kgo.Record, err error) {
	if r.opts.FailOnError {
		// The position stays at the message: a restart fails on it again.
		r.next[rec.Partition] = rec.Offset
		r.failed = fmt.Errorf("kafka source %s: topic %s partition %d offset %d: %v (error.policy = 'fail')",
			r.rel.Name, rec.Topic, rec.Partition, rec.Offset, err)
		r.e.log.Error("kafka source failed", "source", r.rel.Name, "err", r.failed)
		r.fail(r.failed)
		return
	}
	r.bad++
	r.e.log.Warn("kafka source: skipped a bad message", "source", r.rel.Name, "topic", rec.Topic,
		"partition", rec.Partition, "offset", rec.Offset, "err", err)
}

// setFailed fails the reader.
func (r *kafkaReader) setFailed(err error) {
	r.mu.Lock()
	r.failed = err
	r.mu.Unlock()
	r.fail(err)
}

// flush sends the batch under way (rows of partition r.part), and then the
// watermark if it moved. (Called with mu held.)
func (r *kafkaReader) flush() error {
	if r.bb.Rows() == 0 {
		return nil
	}
	rec := r.bb.Finish()
	r.rows.Add(rec.NumRows())
	b := exec.NewBatch(rec, nil)
	if r.wms == nil {
		return r.send(exec.Message{Batch: b})
	}
	g, err := r.watermarkGen(r.part)
	if err == nil {
		err = g.Observe(r.e.mem, b)
	}
	if err != nil {
		b.Release()
		return err
	}
	if err := r.send(exec.Message{Batch: b}); err != nil {
		return err
	}
	wm, ok := r.watermark()
	if !ok || !r.wmSent.advance(wm) {
		return nil
	}
	return r.send(exec.Message{Watermark: wm})
}

func (r *kafkaReader) close() {
	close(r.stop)
	<-r.done
}

// exhausted is false: a topic has no end.
func (r *kafkaReader) exhausted() bool { return false }

func (r *kafkaReader) rowsRead() int64 { return r.rows.Load() }

func (r *kafkaReader) source() *catalog.Relation { return r.rel }

// progress returns the offsets consumed over every partition and the
// messages behind the last high watermarks seen (the consumer lag).
func (r *kafkaReader) progress() (rows, left int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for p, n := range r.next {
		rows += n
		if h, ok := r.hwm[p]; ok {
			left += max(h-n, 0)
		}
	}
	return rows, left
}

// kafkaPartition is one partition's row of streamsql_source_partitions.
type kafkaPartition struct {
	partition    int32
	offset, high int64
	badMessages  int64
	failed       error
	highKnown    bool
}

// partitions lists the reader's partitions, sorted.
func (r *kafkaReader) partitions() []kafkaPartition {
	r.mu.Lock()
	defer r.mu.Unlock()
	ps := make([]kafkaPartition, 0, len(r.next))
	for p, n := range r.next {
		h, ok := r.hwm[p]
		ps = append(ps, kafkaPartition{partition: p, offset: n, high: h, highKnown: ok})
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].partition < ps[j].partition })
	return ps
}

// status returns the reader's count of bad messages and its failure.
func (r *kafkaReader) status() (int64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.bad, r.failed
}
