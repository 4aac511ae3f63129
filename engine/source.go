package engine

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"time"

	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// createSource creates a source; it returns once its catalog entry is
// committed. Nothing runs until a view reads it.
func (e *Engine) createSource(ctx context.Context, cat *catalog.Catalog, stmt *sql.CreateSource, w notifier) error {
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	if exists, err := e.nameTaken(cat, stmt.Schema, stmt.Name, stmt.IfNotExists, w); exists {
		return err
	}
	if stmt.Options["connector"] == cdcConnector {
		return e.createCDCSource(ctx, cat, stmt)
	}
	if len(stmt.Columns) == 0 {
		cols, err := defaultSourceColumns(stmt.Options)
		if err != nil {
			return err
		}
		if len(cols) == 0 {
			return sqlerr.New(sqlerr.SyntaxError, "a %s source needs a column list", stmt.Options["connector"])
		}
		stmt.Columns = cols
	}
	if err := addIncludeColumns(stmt); err != nil {
		return err
	}
	rel := &catalog.Relation{
		Database: cat.DatabaseName(),
		ID:       e.catSrc.allocIDs(1)[0],
		Schema:   stmt.Schema,
		Name:     stmt.Name,
		Kind:     catalog.Source,
		Columns:  append(append([]catalog.Column(nil), stmt.Columns...), catalog.Column{Name: catalog.RowIDColumn, Type: types.Int64T, Hidden: true, NotNull: true}),
		Options:  stmt.Options,
		// Sources only insert rows.
		AppendOnly: true,
		Watermark:  stmt.Watermark,
	}
	rel.Key = []int{len(rel.Columns) - 1}
	if err := e.checkSource(ctx, rel); err != nil {
		return err
	}
	var catErr error
	epoch := e.coord.Schedule(barrier.Change{AfterInject: func(uint64) { catErr = e.catSrc.put(rel) }})
	if err := e.awaitCommit(e.ctx, epoch+1); err != nil {
		return err
	}
	if catErr != nil {
		return catErr
	}
	cat.Add(rel)
	return nil
}

// dropSource removes a source (its dependent views are dropped first by
// drop).
func (e *Engine) dropSource(ctx context.Context, rel *catalog.Relation) error {
	e.cat.Remove(rel.ID)
	epoch := e.coord.Schedule(barrier.Change{AfterInject: func(uint64) { e.catSrc.delete(rel.ID) }})
	return e.awaitCommit(e.ctx, epoch+1)
}

// sourceReader is one of a view's readers of a source: it generates the
// rows of its splits into its actor's input channel and is a barrier source
// of the coordinator. Reader i of a view's n readers of a source (one per
// actor of the view's source fragment) reads the splits s with s mod n = i,
// a batch of each in turn. Generating a batch and injecting a barrier both
// hold mu, so the position recorded with each barrier is exactly the number
// of rows of each split sent before it; it is kept per split, so that after
// a restart, or a rescale that gives the splits to other readers, each
// split resumes there, and because the generator is deterministic the view
// sees every row exactly once.
type sourceReader struct {
	e      *Engine
	rel    *catalog.Relation
	view   uint32
	gen    rowSource
	out    chan<- exec.Message
	offset *state.Table

	// splits are the splits this reader reads, in order.
	splits []int
	// share is the fraction of the source's rows in splits, for pacing.
	share float64

	mu     sync.Mutex
	next   []int64 // per split of splits, the next row to generate
	cursor int     // the index in splits of the split to read next
	paused bool    // the view is paused: generate nothing
	// wms generate the source's watermark (sources with WATERMARK FOR), one
	// per split: the source's is the least over the splits that have rows
	// left, since each split is in event-time order but the splits are not
	// in step. Their positions are kept with the offset. wmSent is the
	// last watermark sent after a batch.
	wms    []*exec.WatermarkGen
	wmSent sentWatermark
	stop   chan struct{}
	done   chan struct{}
}

// offsetKey is the key of the position of a view's reader of a source in
// its offset table as it was kept before readers were split: the next row
// of each split, then (with several splits) the split to read next, as
// varints. It is read when a split has no key of its own (splitOffsetKey).
var offsetKey = []byte("offset")

// splitOffsetKey is the key of split s's position (its next row, a varint)
// in the offset table of a view's readers of a source.
func splitOffsetKey(s int) []byte {
	return binary.AppendUvarint([]byte("split"), uint64(s))
}

// readerPart is which of a view's readers of a source a reader is: reader
// index of count.
type readerPart struct{ index, count int }

func newSourceReader(e *Engine, rel, view *catalog.Relation, table *state.Table, out chan<- exec.Message, part readerPart) (*sourceReader, error) {
	gen, err := newRowSource(rel)
	if err != nil {
		return nil, err
	}
	r := &sourceReader{e: e, rel: rel, view: view.ID, paused: view.Paused, gen: gen, out: out, offset: table,
		stop: make(chan struct{}), done: make(chan struct{})}
	for s := part.index; s < gen.Splits(); s += part.count {
		r.splits = append(r.splits, s)
	}
	r.share = float64(len(r.splits)) / float64(gen.Splits())
	r.next = make([]int64, len(r.splits))
	if err := r.loadPositions(); err != nil {
		return nil, err
	}
	if rel.Watermark != nil {
		expr, err := sql.BindWatermark(rel)
		if err != nil {
			return nil, err
		}
		for _, s := range r.splits {
			g, err := exec.NewWatermarkGen(rel.Watermark.Column, expr)
			if err != nil {
				return nil, err
			}
			v, _, err := table.Get(splitWatermarkKey(s))
			if err != nil {
				return nil, err
			}
			if err := g.LoadState(v); err != nil {
				return nil, err
			}
			r.wms = append(r.wms, g)
		}
	}
	return r, nil
}

// loadPositions reads the committed position of each of the reader's
// splits: its own key, or else its entry in the key of the time readers
// were not split.
func (r *sourceReader) loadPositions() error {
	legacy, hasLegacy, err := r.offset.Get(offsetKey)
	if err != nil {
		return err
	}
	var old []int64
	for s := 0; hasLegacy && len(legacy) > 0 && s < r.gen.Splits(); s++ {
		n, k := binary.Varint(legacy)
		if k <= 0 || n < 0 {
			return fmt.Errorf("engine: corrupt position of a reader of source %s", r.rel.Name)
		}
		old = append(old, n)
		legacy = legacy[k:]
	}
	for j, s := range r.splits {
		v, ok, err := r.offset.Get(splitOffsetKey(s))
		if err != nil {
			return err
		}
		if !ok {
			if s < len(old) {
				r.next[j] = old[s]
			}
			continue
		}
		n, k := binary.Varint(v)
		if k <= 0 || n < 0 {
			return fmt.Errorf("engine: corrupt position of split %d of a reader of source %s", s, r.rel.Name)
		}
		r.next[j] = n
	}
	return nil
}

// splitWatermarkKey is the key of split s's watermark position in the
// reader's offset table.
func splitWatermarkKey(s int) []byte {
	if s == 0 {
		return watermarkKey
	}
	return binary.AppendUvarint(append([]byte(nil), watermarkKey...), uint64(s))
}

// watermark returns the source's watermark: the least of the splits that
// have rows left (the greatest, once none has), or false while a split
// that has rows left has produced none. (Called with mu held.)
func (r *sourceReader) watermark() (*barrier.Watermark, bool) {
	var least, greatest *barrier.Watermark
	for j, g := range r.wms {
		wm, ok := g.Current()
		if rows := r.gen.SplitRows(r.splits[j]); rows >= 0 && r.next[j] >= rows {
			if ok && (greatest == nil || wm.Value > greatest.Value) {
				greatest = wm
			}
			continue
		}
		if !ok {
			return nil, false
		}
		if least == nil || wm.Value < least.Value {
			least = wm
		}
	}
	if least == nil {
		least = greatest
	}
	return least, least != nil
}

// Inject records the reader's position for the epoch and sends the barrier.
func (r *sourceReader) Inject(ctx context.Context, b *barrier.Barrier) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var pos []byte
	for j, s := range r.splits {
		pos = binary.AppendVarint(pos[:0], r.next[j])
		r.offset.Put(splitOffsetKey(s), pos)
	}
	for j, g := range r.wms {
		if _, ok := g.Current(); ok {
			r.offset.Put(splitWatermarkKey(r.splits[j]), g.AppendState(nil))
		}
	}
	wm, _ := r.watermark()
	if err := endEpoch(r.offset, b, wm, r.send); err != nil {
		return err
	}
	// Pausing the view pauses its reader after the barrier, at this position.
	r.paused = viewPausedAfter(b, r.view, r.paused)
	return nil
}

// send delivers m unless the reader is stopping.
func (r *sourceReader) send(m exec.Message) error {
	return sendUnlessStopped(r.e.ctx, r.stop, r.out, m)
}

// run generates batches, paced to the source's rows per second, until the
// source ends or the reader stops.
func (r *sourceReader) run() {
	defer close(r.done)
	const tick = 100 * time.Millisecond
	// A turn takes 1/k of a chunk from each of the k splits, so that the
	// splits advance together on the source's timeline (a watermark
	// generated from them all then finds no split far behind).
	chunk := int64(r.gen.ChunkSize())
	if k := int64(len(r.next)); k > 1 {
		chunk = max(1, (chunk+k-1)/k)
	}
	perTick := chunk
	rate := r.gen.RowsPerSecond() * r.share
	if rate > 0 {
		perTick = max(1, int64(rate*tick.Seconds()))
	}
	ticker := time.NewTicker(tick)
	defer ticker.Stop()
	for {
		ended := false
		for left := perTick; left > 0; {
			if !r.e.awaitStateRoom(r.stop) {
				return
			}
			r.mu.Lock()
			j, ok := r.nextSplit()
			ended = !ok
			if r.paused || !ok {
				r.mu.Unlock()
				break
			}
			rec := r.gen.Batch(r.e.mem, r.splits[j], r.next[j], min(left, chunk))
			r.next[j] += rec.NumRows()
			left -= max(rec.NumRows(), 1)
			err := r.sendBatch(j, exec.NewBatch(rec, nil))
			r.mu.Unlock()
			if err != nil {
				return
			}
		}
		r.mu.Lock()
		paused := r.paused
		r.mu.Unlock()
		if rate == 0 && !paused && !ended {
			select {
			case <-r.stop:
				return
			default:
			}
			continue
		}
		select {
		case <-ticker.C:
		case <-r.stop:
			return
		case <-r.e.ctx.Done():
			return
		}
	}
}

// nextSplit returns the index in splits of the next split, in turn, that
// has rows left, and moves the cursor past it; false if every split has
// ended. (Called with mu held.)
func (r *sourceReader) nextSplit() (int, bool) {
	k := len(r.next)
	for i := 0; i < k; i++ {
		j := (r.cursor + i) % k
		if rows := r.gen.SplitRows(r.splits[j]); rows < 0 || r.next[j] < rows {
			r.cursor = (j + 1) % k
			return j, true
		}
	}
	return 0, false
}

// exhausted reports whether every split has ended.
func (r *sourceReader) exhausted() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for j, next := range r.next {
		if rows := r.gen.SplitRows(r.splits[j]); rows < 0 || next < rows {
			return false
		}
	}
	return true
}

// sendBatch sends a generated batch of split splits[j], and then the source's watermark if
// the batch moved it: a fast source keeps the operators that clean their
// state by watermark from holding a whole epoch of rows. (Called with mu
// held, so the watermarks' positions in the stream replay exactly.)
func (r *sourceReader) sendBatch(j int, b *exec.Batch) error {
	if r.wms == nil {
		return r.send(exec.Message{Batch: b})
	}
	if err := r.wms[j].Observe(r.e.mem, b); err != nil {
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

// rowsRead is the number of rows generated, in every run.
func (r *sourceReader) rowsRead() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var n int64
	for _, k := range r.next {
		n += k
	}
	return n
}

// close stops the reader and waits for it.
func (r *sourceReader) close() {
	close(r.stop)
	<-r.done
}

// SourcesExhausted reports whether every source reader of every view has
// generated all of its rows (false while one reads an unbounded source).
func (e *Engine) SourcesExhausted() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, v := range e.views {
		for _, r := range v.readers {
			if r == nil {
				continue
			}
			if !r.exhausted() {
				return false
			}
		}
	}
	return true
}

// SourceRowsRead returns the rows the source readers of every view have
// generated so far (benchmarks wait on it before a FLUSH).
func (e *Engine) SourceRowsRead() int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	var n int64
	for _, v := range e.views {
		for _, r := range v.readers {
			if r != nil {
				n += r.rowsRead()
			}
		}
	}
	return n
}
