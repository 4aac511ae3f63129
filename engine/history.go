package engine

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// historyTable is the state table of the persisted checkpoint history. It
// is reserved at the top of the id space, which allocIDs counts up from 1
// and never reaches.
const historyTable state.TableID = math.MaxUint32 - 1

// DefaultCheckpointHistoryRetention is how long the persisted checkpoint
// history keeps a checkpoint by default.
const DefaultCheckpointHistoryRetention = 24 * time.Hour

// A checkpoint whose barrier latency exceeds slowCheckpointIntervals
// barrier intervals, and at least slowCheckpointMin, is logged as slow (at
// warn level).
const (
	slowCheckpointIntervals = 2
	slowCheckpointMin       = time.Second
)

// checkpointEntry is one persisted checkpoint (JSON; times in microseconds
// since the Unix epoch, durations in microseconds).
type checkpointEntry struct {
	Epoch     uint64 `json:"epoch"`
	Started   int64  `json:"started"`
	Duration  int64  `json:"duration"`
	Status    string `json:"status"`
	Keys      int    `json:"keys,omitempty"`
	Bytes     int64  `json:"bytes,omitempty"`
	StateSize int64  `json:"state_size,omitempty"`
	MaxAlign  int64  `json:"max_align,omitempty"` // -1: no view aligned
	Commit    int64  `json:"commit,omitempty"`
	// The stages of Duration (-1: unknown, as in entries persisted before
	// they were recorded): Inject from the start of the barrier's injection
	// until every source had it; Dataflow from then until every view had
	// acknowledged it (processed the epoch's changes and written its
	// state); Flush and Sync the parts of Commit building the store's batch
	// and committing it with an fsync.
	Inject   int64 `json:"inject"`
	Dataflow int64 `json:"dataflow"`
	Flush    int64 `json:"flush"`
	Sync     int64 `json:"sync"`
}

// historySource persists the checkpoint history: at every barrier it
// writes the checkpoints that completed since the last one into the
// history table (so epoch n's record is committed with a later epoch), and
// deletes those older than the retention. Its Inject runs on the
// coordinator's goroutine; mu guards the fields.
type historySource struct {
	e         *Engine
	table     *state.Table
	retention time.Duration

	mu        sync.Mutex
	persisted uint64    // the last epoch written
	pruned    time.Time // the last deletion of old records
}

func newHistorySource(e *Engine) *historySource {
	h := &historySource{e: e, table: e.store.Table(historyTable), retention: e.opts.CheckpointHistoryRetention}
	if h.retention <= 0 {
		h.retention = DefaultCheckpointHistoryRetention
	}
	// Epochs go on from the committed one: what was persisted before the
	// restart is older.
	h.persisted = e.store.CommittedEpoch()
	return h
}

// historyKey orders entries by start time, then epoch.
func historyKey(started int64, epoch uint64) []byte {
	k := binary.BigEndian.AppendUint64(nil, uint64(started))
	return binary.BigEndian.AppendUint64(k, epoch)
}

func (h *historySource) Inject(_ context.Context, b *barrier.Barrier) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range h.e.coord.HistoryAfter(h.persisted) {
		ent := h.e.checkpointEntry(r)
		v, err := json.Marshal(ent)
		if err != nil {
			return err
		}
		h.table.Put(historyKey(ent.Started, ent.Epoch), v)
		h.persisted = r.Epoch
		h.e.metrics.checkpointDone(h.e, ent)
	}
	if now := time.Now(); now.Sub(h.pruned) > time.Minute {
		h.pruned = now
		h.table.DeleteRange(nil, historyKey(now.Add(-h.retention).UnixMicro(), 0))
	}
	h.table.Seal(b.Epoch)
	return nil
}

// checkpointEntry describes checkpoint r with its commit statistics.
func (e *Engine) checkpointEntry(r barrier.CheckpointRecord) checkpointEntry {
	stats, align := e.stats.get(r.Epoch)
	ent := checkpointEntry{Epoch: r.Epoch, Started: r.Started.UnixMicro(), Status: r.Status, MaxAlign: -1, Duration: -1,
		Inject: -1, Dataflow: -1, Flush: -1, Sync: -1}
	if !r.Finished.IsZero() {
		ent.Duration = r.Finished.Sub(r.Started).Microseconds()
	}
	if !r.Injected.IsZero() {
		ent.Inject = r.Injected.Sub(r.Started).Microseconds()
		if !r.Aligned.IsZero() {
			ent.Dataflow = r.Aligned.Sub(r.Injected).Microseconds()
		}
	}
	for _, d := range align {
		ent.MaxAlign = max(ent.MaxAlign, d.Microseconds())
	}
	if r.Status == barrier.StatusCompleted {
		ent.Keys, ent.Bytes, ent.StateSize, ent.Commit = stats.Keys, stats.Bytes, stats.StateSize, stats.Duration.Microseconds()
		ent.Flush, ent.Sync = stats.Flush.Microseconds(), stats.Sync.Microseconds()
	}
	return ent
}

// checkpointHistory returns the persisted checkpoints (committed snapshot;
// the latest limit of them, or all if limit <= 0) followed by the more
// recent ones the coordinator keeps in memory, oldest first.
func (e *Engine) checkpointHistory(limit int) ([]checkpointEntry, []barrier.CheckpointRecord, error) {
	snap := e.store.Snapshot()
	defer snap.Release()
	it, err := snap.NewIter(historyTable, nil, nil)
	if err != nil {
		return nil, nil, err
	}
	defer it.Close()
	var persisted []checkpointEntry
	var last uint64
	for ok := it.Last(); ok && (limit <= 0 || len(persisted) < limit); ok = it.Prev() {
		ent := checkpointEntry{Inject: -1, Dataflow: -1, Flush: -1, Sync: -1}
		if err := json.Unmarshal(it.Value(), &ent); err != nil {
			return nil, nil, err
		}
		persisted = append(persisted, ent)
		last = max(last, ent.Epoch)
	}
	if err := it.Error(); err != nil {
		return nil, nil, err
	}
	slices.Reverse(persisted)
	var recent []barrier.CheckpointRecord
	for _, r := range e.coord.History() {
		if r.Epoch > last {
			recent = append(recent, r)
		}
	}
	return persisted, recent, nil
}

// checkpointHistoryRows lists streamsql_checkpoints.
func (e *Engine) checkpointHistoryRows() ([][]types.Datum, error) {
	persisted, recent, err := e.checkpointHistory(0)
	if err != nil {
		return nil, err
	}
	micros := func(us int64) types.Datum {
		if us < 0 {
			return types.Null
		}
		return types.DFloat(float64(us) / 1000)
	}
	var rows [][]types.Datum
	add := func(ent checkpointEntry, errText string) {
		keys, bytes, size, commit := types.Null, types.Null, types.Null, types.Null
		if ent.Status == barrier.StatusCompleted {
			keys, bytes, size, commit = types.DInt(int64(ent.Keys)), types.DInt(ent.Bytes), types.DInt(ent.StateSize), micros(ent.Commit)
		}
		errDatum := types.Null
		if errText != "" {
			errDatum = types.DText(errText)
		}
		rows = append(rows, []types.Datum{
			types.DInt(int64(ent.Epoch)), types.DInt(ent.Started), micros(ent.Duration), keys, bytes, size, micros(ent.MaxAlign),
			types.DText(ent.Status), errDatum, commit,
			micros(ent.Inject), micros(ent.Dataflow), micros(ent.Flush), micros(ent.Sync),
		})
	}
	for _, ent := range persisted {
		add(ent, "")
	}
	for _, r := range recent {
		add(e.checkpointEntry(r), r.Error)
	}
	return rows, nil
}

// progress returns the rows the reader has generated and the rows its
// source has left (-1 if a split is unbounded).
func (r *sourceReader) progress() (rows, left int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for s, n := range r.next {
		rows += n
		if total := r.gen.SplitRows(r.splits[s]); total < 0 || left < 0 {
			left = -1
		} else {
			left += max(total-n, 0)
		}
	}
	return rows, left
}
