package engine

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/connector/kafka"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
	"github.com/twmb/franz-go/pkg/kgo"
)

// prepareKafkaTable checks CREATE TABLE ... WITH (connector = 'kafka', ...)
// (its options, its key against the format, that the brokers answer and
// the topic exists) and marks rel as fed by Kafka: its options are kept and
// it gets the offset table its reader writes with its rows.
func (e *Engine) prepareKafkaTable(ctx context.Context, stmt *ir.CreateTable, rel *catalog.Relation) error {
	if c := stmt.Connector["connector"]; c != "kafka" {
		return sqlerr.Unsupported("connector \"%s\" on a table (a table is fed by kafka, or by a postgres-cdc source with FROM source TABLE '...')", c)
	}
	opts, err := kafka.ParseTableOptions(stmt.Connector)
	if err != nil {
		return err
	}
	if opts.Format != kafka.FormatPlain && len(stmt.PrimaryKey) == 0 {
		return sqlerr.New(sqlerr.InvalidObjectDefinition, "a table with FORMAT %s needs a PRIMARY KEY", opts.Format).
			WithHint("FORMAT UPSERT keys rows on the message key: INCLUDE key AS k and PRIMARY KEY (k), or PRIMARY KEY on columns that the JSON key holds.")
	}
	if _, err := newKafkaChangeDecoder(opts, rel); err != nil {
		return err
	}
	if err := kafka.CheckSource(ctx, opts); err != nil {
		return err
	}
	rel.Options = stmt.Connector
	rel.CDCOffsetTable = e.catSrc.allocIDs(1)[0]
	return nil
}

// isKafkaTable reports whether rel is a table fed by Kafka.
func isKafkaTable(rel *catalog.Relation) bool {
	return rel.Kind == catalog.Table && rel.CDCOffsetTable != 0 && rel.Options["connector"] == "kafka"
}

// newKafkaChangeDecoder returns the decoder of the messages of the Kafka
// table rel (its visible columns, keyed on its primary key if it has one).
func newKafkaChangeDecoder(opts *kafka.SourceOptions, rel *catalog.Relation) (*kafka.ChangeDecoder, error) {
	var key []int
	if rel.PrimaryKey {
		key = rel.Key
	}
	d, err := kafka.NewChangeDecoder(opts, kafkaColumns(rel), key)
	if err != nil {
		return nil, sqlerr.New(sqlerr.InvalidParameterValue, "%v", err)
	}
	return d, nil
}

// kafkaTableReader feeds one table from its Kafka topic. The topic's
// partitions are its splits: every fetch is applied to the table in one
// epoch with the next offset of each partition and the count of bad
// messages, written to the table's offset table (applyChanges), so the
// committed rows are always those of the committed offsets; after a
// restart the reader goes on from them and every message is applied once.
//
// One goroutine runs the reader, until the engine closes or the table is
// dropped. While the brokers are away nothing is read.
type kafkaTableReader struct {
	e    *Engine
	w    *tableWriter
	opts *kafka.SourceOptions
	dec  *kafka.ChangeDecoder
	// next is the next offset of each known partition; consumed the
	// partitions this run consumes.
	next     map[int32]int64
	consumed map[int32]bool
	bad      int64
	// failed stops the reading (error.policy = 'fail').
	failed error
	// status is what streamsql_sources shows: the count of bad messages and
	// the failure, published by the reader's goroutine.
	shownBad    atomic.Int64
	shownFailed atomic.Pointer[string]
	// width is the table's number of columns (the decoder's, and the row
	// id of a table without a key last).
	width int
}

// runKafkaTable starts the reader of the Kafka table w from its committed
// offsets once the engine has injected its first barrier (nothing is
// written before every dataflow is restored).
func (e *Engine) runKafkaTable(w *tableWriter) {
	e.actors.Add(1)
	go func() {
		defer e.actors.Done()
		if err := e.coord.WaitInjected(e.ctx, e.coord.Committed()+1); err != nil {
			return
		}
		r, err := newKafkaTableReader(e, w)
		if err != nil {
			e.log.Error("kafka table: cannot start", "table", w.rel.Name, "err", err)
			return
		}
		kafkaTables.Store(w, r)
		defer kafkaTables.Delete(w)
		r.run(e.ctx)
	}()
}

// kafkaTables are the running readers of Kafka tables, for
// streamsql_sources.
var kafkaTables sync.Map // *tableWriter -> *kafkaTableReader

// status returns the reader's count of bad messages and its failure ("" if
// none).
func (r *kafkaTableReader) status() (int64, string) {
	failed := ""
	if f := r.shownFailed.Load(); f != nil {
		failed = *f
	}
	return r.shownBad.Load(), failed
}

func newKafkaTableReader(e *Engine, w *tableWriter) (*kafkaTableReader, error) {
	opts, err := kafka.ParseTableOptions(w.rel.Options)
	if err != nil {
		return nil, err
	}
	dec, err := newKafkaChangeDecoder(opts, w.rel)
	if err != nil {
		return nil, err
	}
	next, bad, err := loadKafkaOffsets(w.cdcOffset, "table "+w.rel.Name)
	if err != nil {
		return nil, err
	}
	r := &kafkaTableReader{e: e, w: w, opts: opts, dec: dec, next: next, bad: bad,
		consumed: map[int32]bool{}, width: len(w.types)}
	r.shownBad.Store(bad)
	return r, nil
}

// run consumes the topic until ctx ends or the table is dropped.
func (r *kafkaTableReader) run(ctx context.Context) {
	rd, err := kafka.NewReader(r.opts)
	if err != nil {
		r.e.log.Error("kafka table: cannot read", "table", r.w.rel.Name, "err", err)
		return
	}
	defer rd.Close()
	var discovered, lastErr time.Time
	for ctx.Err() == nil && !r.w.isDropped() {
		if time.Since(discovered) >= r.opts.Discovery {
			if err := r.discover(ctx, rd); err != nil {
				if time.Since(lastErr) > 10*time.Second {
					r.e.log.Warn("kafka table: looking for partitions", "table", r.w.rel.Name, "topic", r.opts.Topic, "err", err)
					lastErr = time.Now()
				}
				discovered = time.Now().Add(time.Second - r.opts.Discovery) // again in a second
			} else {
				discovered = time.Now()
			}
		}
		if r.failed != nil {
			sleepCtx(ctx, 100*time.Millisecond)
			continue
		}
		if !r.e.awaitStateRoom(ctx.Done()) {
			return
		}
		pctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		f := rd.Poll(pctx, exec.BatchSize)
		cancel()
		if f.Err != nil && time.Since(lastErr) > 10*time.Second {
			r.e.log.Warn("kafka table: fetching", "table", r.w.rel.Name, "err", f.Err)
			lastErr = time.Now()
		}
		if len(f.Records) == 0 {
			continue
		}
		if err := r.apply(f.Records); err != nil {
			if !r.w.isDropped() && ctx.Err() == nil {
				r.e.log.Error("kafka table: writing", "table", r.w.rel.Name, "err", err)
			}
			return
		}
	}
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
}

// discover adds the partitions the reader does not know yet (at the
// startup mode's offsets when it knows none, else from their beginning),
// records their offsets with the table, and consumes every known partition
// that this run does not consume yet from its next offset.
func (r *kafkaTableReader) discover(ctx context.Context, rd *kafka.Reader) error {
	found, err := rd.Discover(ctx, r.next, len(r.next) == 0)
	if err != nil {
		return err
	}
	if len(found) > 0 {
		for p, n := range found {
			r.next[p] = n
		}
		if _, err := r.w.applyChanges(nil, r.record); err != nil {
			return err
		}
	}
	start := map[int32]int64{}
	for p, n := range r.next {
		if !r.consumed[p] {
			r.consumed[p] = true
			start[p] = n
		}
	}
	rd.Consume(start)
	return nil
}

// apply decodes a fetch and applies its changes with the offsets after it.
func (r *kafkaTableReader) apply(recs []*kgo.Record) error {
	changes := make([]cdcChange, 0, len(recs))
	for _, rec := range recs {
		next, ok := r.next[rec.Partition]
		if !ok || rec.Offset < next || r.failed != nil {
			continue // not ours, or already applied (a refetch after a seek)
		}
		r.next[rec.Partition] = rec.Offset + 1
		ch, err := r.dec.Decode(rec)
		if err != nil {
			r.badMessage(rec, err)
			continue
		}
		if c, ok := r.change(ch); ok {
			changes = append(changes, c)
		}
	}
	_, err := r.w.applyChanges(changes, r.record)
	return err
}

// change converts a decoded message to a change of the table's rows.
func (r *kafkaTableReader) change(ch kafka.Change) (cdcChange, bool) {
	switch ch.Kind {
	case kafka.ChangeUpsert:
		return cdcChange{kind: 'I', new: r.full(ch.Row)}, true
	case kafka.ChangeUpdate:
		return cdcChange{kind: 'U', old: r.full(ch.Old), new: r.full(ch.Row)}, true
	case kafka.ChangeDelete:
		return cdcChange{kind: 'D', old: r.full(ch.Old)}, true
	}
	return cdcChange{}, false
}

// full widens a row of the visible columns to the table's (with a row id
// slot, which applyChanges fills, for a table without a key).
func (r *kafkaTableReader) full(row []types.Datum) []types.Datum {
	if row == nil || len(row) == r.width {
		return row
	}
	return append(row, types.Null)
}

// badMessage skips (and counts) or fails on a message that did not decode.
func (r *kafkaTableReader) badMessage(rec *kgo.Record, err error) {
	if r.opts.FailOnError {
		// The position stays at the message: a restart fails on it again.
		r.next[rec.Partition] = rec.Offset
		r.failed = fmt.Errorf("kafka table %s: topic %s partition %d offset %d: %v (error.policy = 'fail')",
			r.w.rel.Name, rec.Topic, rec.Partition, rec.Offset, err)
		r.e.log.Error("kafka table stopped reading", "table", r.w.rel.Name, "err", r.failed)
		msg := r.failed.Error()
		r.shownFailed.Store(&msg)
		return
	}
	r.bad++
	r.shownBad.Store(r.bad)
	r.e.log.Warn("kafka table: skipped a bad message", "table", r.w.rel.Name, "topic", rec.Topic,
		"partition", rec.Partition, "offset", rec.Offset, "err", err)
}

// record writes the reader's position into the table's offset table.
// (Called by applyChanges, with the table's writer locked.)
func (r *kafkaTableReader) record(offset *state.Table) {
	for p, n := range r.next {
		offset.Put(kafkaOffsetKey(p), binary.AppendVarint(nil, n))
	}
	offset.Put(kafkaBadKey, binary.AppendVarint(nil, r.bad))
}
