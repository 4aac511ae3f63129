package engine

import (
	"sort"
	"strings"

	"context"

	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/connector/kafka"
	"github.com/streamsql/streamsql/connector/posixfs"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/state"
)

// viewSourceReader is one view's reader of a source: a barrier source of
// the coordinator that sends the source's rows into the view's input and
// records its position in the view's offset table at every barrier, so
// that after a restart it resumes exactly there. Generated sources
// (sourceReader) record row numbers; Kafka sources (kafkaReader) record
// per-partition offsets.
type viewSourceReader interface {
	Inject(ctx context.Context, b *barrier.Barrier) error
	// run reads until close; it runs on its own goroutine.
	run()
	close()
	// exhausted reports whether the source has no rows left.
	exhausted() bool
	// rowsRead is the number of rows sent (by this run).
	rowsRead() int64
	// progress returns the rows read in all (across restarts) and the rows
	// known to be left (-1: unbounded or unknown), for the metrics.
	progress() (rows, left int64)
	// source is the source relation read.
	source() *catalog.Relation
}

// newViewSourceReader opens a view's reader of source rel at its committed
// position in table. fail fails the view.
// part is which of the view's readers of rel this one is: a Kafka or
// posix_fs source has one (part {0, 1}).
func newViewSourceReader(e *Engine, rel, view *catalog.Relation, table *state.Table, out chan<- exec.Message, fail func(error), part readerPart) (viewSourceReader, error) {
	switch rel.Options["connector"] {
	case "kafka":
		return newKafkaReader(e, rel, view, table, out, fail)
	case posixfsConnector:
		return newFSReader(e, rel, view, table, out, fail)
	}
	return newSourceReader(e, rel, view, table, out, part)
}

// viewPausedAfter returns whether the view is paused after barrier b, given
// that it was paused before it.
func viewPausedAfter(b *barrier.Barrier, view uint32, paused bool) bool {
	for _, mu := range b.Mutations {
		switch mu := mu.(type) {
		case *exec.PauseView:
			if mu.View == view {
				paused = true
			}
		case *exec.ResumeView:
			if mu.View == view {
				paused = false
			}
		}
	}
	return paused
}

// fail fails the view (the first failure wins).
func (v *view) fail(err error) { v.failed.CompareAndSwap(nil, &err) }

// checkSource checks a new source's options (and, for Kafka, that its
// brokers answer and its topic exists; for posix_fs, that its root is a
// directory) before its catalog entry is made.
func (e *Engine) checkSource(ctx context.Context, rel *catalog.Relation) error {
	if rel.Options["connector"] == posixfsConnector {
		opts, err := posixfs.ParseOptions(rel.Options)
		if err != nil {
			return err
		}
		return opts.CheckRoot()
	}
	if rel.Options["connector"] != "kafka" {
		_, err := newRowSource(rel)
		return err
	}
	opts, err := kafka.ParseSourceOptions(rel.Options)
	if err != nil {
		return err
	}
	bb, err := kafka.NewBatchBuilder(e.mem, opts, kafkaColumns(rel))
	if err != nil {
		return sqlerr.New(sqlerr.InvalidParameterValue, "%v", err)
	}
	bb.Release()
	return kafka.CheckSource(ctx, opts)
}

// addIncludeColumns adds the columns of a Kafka source's INCLUDE clauses
// (options include.<column>), in the order of their names, after its
// declared columns.
func addIncludeColumns(stmt *sql.CreateSource) error {
	var names []string
	for k := range stmt.Options {
		if col, ok := strings.CutPrefix(k, kafka.IncludeOption); ok {
			names = append(names, col)
		}
	}
	if len(names) == 0 {
		return nil
	}
	if stmt.Options["connector"] != "kafka" {
		return sqlerr.New(sqlerr.FeatureNotSupported, "INCLUDE is not supported by connector \"%s\" (only by kafka)", stmt.Options["connector"])
	}
	sort.Strings(names)
	for _, name := range names {
		inc, ok := kafka.ParseInclude(stmt.Options[kafka.IncludeOption+name])
		if !ok {
			return sqlerr.New(sqlerr.InvalidParameterValue, "INCLUDE %s is not a Kafka message field (key, partition, offset, timestamp, header 'name')", stmt.Options[kafka.IncludeOption+name])
		}
		for _, c := range stmt.Columns {
			if c.Name == name {
				return sqlerr.New(sqlerr.DuplicateColumn, "column \"%s\" specified more than once", name)
			}
		}
		stmt.Columns = append(stmt.Columns, catalog.Column{Name: name, Type: kafka.IncludeType(inc.Kind)})
	}
	return nil
}

func (r *sourceReader) source() *catalog.Relation { return r.rel }

// sendUnlessStopped delivers m on out unless the reader stops (stop is
// closed) or the engine closes; m is then released.
func sendUnlessStopped(ctx context.Context, stop <-chan struct{}, out chan<- exec.Message, m exec.Message) error {
	select {
	case out <- m:
		return nil
	case <-stop:
		m.Release()
		return context.Canceled
	case <-ctx.Done():
		m.Release()
		return ctx.Err()
	}
}

// endEpoch ends a reader's epoch at barrier b: the position recorded in
// offset is sealed with the epoch, then the watermark (if any) and the
// barrier go out through send.
func endEpoch(offset *state.Table, b *barrier.Barrier, wm *barrier.Watermark, send func(exec.Message) error) error {
	offset.Seal(b.Epoch)
	if wm != nil {
		if err := send(exec.Message{Watermark: wm}); err != nil {
			return err
		}
	}
	return send(exec.Message{Barrier: b})
}

// sentWatermark is the last watermark a source reader sent after a batch:
// a reader sends the source's watermark again only when it has moved.
type sentWatermark struct {
	ok    bool
	value int64
}

// advance reports whether wm is past the last watermark sent, and records
// it as sent if so.
func (s *sentWatermark) advance(wm *barrier.Watermark) bool {
	if s.ok && wm.Value <= s.value {
		return false
	}
	s.ok, s.value = true, wm.Value
	return true
}
