package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/streamsql/streamsql/types"
)

// cdcStatusInterval is how often a CDC reader confirms committed LSNs and
// answers the upstream when nothing arrives.
const cdcStatusInterval = time.Second

// cdcReader streams one CDC table's changes from its replication slot. It
// applies each upstream transaction at its commit, in one epoch with the
// transaction's end LSN (applyCDC), and confirms an LSN upstream only once
// the epoch holding it is committed, so that after a crash of either side
// replication resumes at a point whose changes are all in streamsql's
// committed state; transactions at or below the committed LSN are skipped.
//
// One goroutine runs the reader; the status fields are atomic for
// streamsql_cdc.
type cdcReader struct {
	e   *Engine
	cfg cdcConfig
	w   *tableWriter

	// applied is the end LSN of the last transaction applied (committed or
	// not); pending are the applied LSNs whose epochs are not yet known to
	// be committed, in order.
	applied uint64
	pending []cdcPending

	// The relation's upstream id and, per upstream column, the table's
	// column (-1: not a column of the table).
	relID  uint32
	colMap []int
	// txn is the current transaction's changes to the table, inTxn whether
	// one is open. idle is the upstream's WAL end at a keepalive received
	// with nothing applied unconfirmed and no transaction open: everything
	// before it is confirmed too, so that the slot does not hold WAL that
	// other tables' writes produce.
	txn   []cdcChange
	inTxn bool
	idle  uint64

	confirmed atomic.Uint64
	received  atomic.Uint64
	connected atomic.Bool
	lastErr   atomic.Pointer[string]
}

type cdcPending struct{ epoch, lsn uint64 }

// cdcReaders are the running readers, for streamsql_cdc.
var cdcReaders sync.Map // *tableWriter -> *cdcReader

// runCDC starts the table's reader at lsn, the committed LSN of its rows.
func (e *Engine) runCDC(cfg cdcConfig, w *tableWriter, lsn uint64) {
	r := &cdcReader{e: e, cfg: cfg, w: w, applied: lsn}
	r.confirmed.Store(lsn)
	r.received.Store(lsn)
	cdcReaders.Store(w, r)
	e.actors.Add(1)
	go func() {
		defer e.actors.Done()
		defer cdcReaders.Delete(w)
		r.run(e.ctx)
	}()
}

// run streams until ctx ends or the table is dropped, reconnecting with
// backoff after a lost connection.
func (r *cdcReader) run(ctx context.Context) {
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		start := time.Now()
		err := r.stream(ctx)
		if ctx.Err() != nil {
			return
		}
		if errors.Is(err, errTableDropped) {
			r.dropSlot()
			return
		}
		r.connected.Store(false)
		msg := err.Error()
		r.lastErr.Store(&msg)
		if time.Since(start) > time.Minute {
			backoff = 100 * time.Millisecond
		}
		r.e.log.Warn("cdc: replication interrupted, retrying", "table", r.w.rel.Name, "upstream", r.cfg.addr(), "err", err, "backoff", backoff)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 10*time.Second)
	}
}

var errTableDropped = errors.New("cdc: table dropped")

// dropSlot drops the slot of a dropped table, so that upstream stops
// retaining WAL for it.
func (r *cdcReader) dropSlot() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgconn.Connect(ctx, r.cfg.connString(true))
	if err != nil {
		return
	}
	defer conn.Close(ctx)
	_ = pglogrepl.DropReplicationSlot(ctx, conn, cdcSlotName(r.cfg, r.w.rel), pglogrepl.DropReplicationSlotOptions{Wait: true})
}

// stream runs one replication connection until it fails.
func (r *cdcReader) stream(ctx context.Context) error {
	conn, err := pgconn.Connect(ctx, r.cfg.connString(true))
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	r.txn, r.relID, r.colMap, r.inTxn = nil, 0, nil, false
	pub := "'" + r.cfg.publication + "'"
	if err := pglogrepl.StartReplication(ctx, conn, cdcSlotName(r.cfg, r.w.rel), pglogrepl.LSN(r.confirmed.Load()),
		pglogrepl.StartReplicationOptions{PluginArgs: []string{"proto_version '1'", "publication_names " + pub}}); err != nil {
		return err
	}
	r.connected.Store(true)
	r.lastErr.Store(nil)
	next := time.Now().Add(cdcStatusInterval)
	for {
		if r.w.isDropped() {
			return errTableDropped
		}
		if time.Now().After(next) {
			if err := r.confirm(ctx, conn, false); err != nil {
				return err
			}
			next = time.Now().Add(cdcStatusInterval)
		}
		rctx, cancel := context.WithDeadline(ctx, next)
		raw, err := conn.ReceiveMessage(rctx)
		cancel()
		if err != nil {
			if pgconn.Timeout(err) && ctx.Err() == nil {
				continue
			}
			return err
		}
		switch msg := raw.(type) {
		case *pgproto3.ErrorResponse:
			return pgconn.ErrorResponseToPgError(msg)
		case *pgproto3.CopyData:
			if err := r.handle(ctx, conn, msg.Data); err != nil {
				return err
			}
		}
	}
}

// handle handles one CopyData message of the replication stream.
func (r *cdcReader) handle(ctx context.Context, conn *pgconn.PgConn, data []byte) error {
	if len(data) == 0 {
		return nil
	}
	switch data[0] {
	case pglogrepl.PrimaryKeepaliveMessageByteID:
		ka, err := pglogrepl.ParsePrimaryKeepaliveMessage(data[1:])
		if err != nil {
			return err
		}
		r.observe(uint64(ka.ServerWALEnd))
		if !r.inTxn && len(r.pending) == 0 {
			r.idle = uint64(ka.ServerWALEnd)
		}
		if ka.ReplyRequested {
			return r.confirm(ctx, conn, false)
		}
	case pglogrepl.XLogDataByteID:
		x, err := pglogrepl.ParseXLogData(data[1:])
		if err != nil {
			return err
		}
		r.observe(uint64(x.ServerWALEnd))
		m, err := pglogrepl.Parse(x.WALData)
		if err != nil {
			return err
		}
		return r.message(m)
	}
	return nil
}

// observe records the upstream's WAL end.
func (r *cdcReader) observe(lsn uint64) {
	if lsn > r.received.Load() {
		r.received.Store(lsn)
	}
}

// message handles one pgoutput message.
func (r *cdcReader) message(m pglogrepl.Message) error {
	switch m := m.(type) {
	case *pglogrepl.RelationMessage:
		if m.Namespace+"."+m.RelationName != r.w.rel.Options["cdc.table"] {
			return nil
		}
		r.relID = m.RelationID
		r.colMap = make([]int, len(m.Columns))
		for i, c := range m.Columns {
			r.colMap[i] = -1
			for j, col := range r.w.rel.Columns {
				if col.Name == c.Name {
					r.colMap[i] = j
				}
			}
		}
		for _, k := range r.w.rel.Key {
			if !mapped(r.colMap, k) {
				return fmt.Errorf("cdc: upstream table %s no longer has key column %s", r.w.rel.Options["cdc.table"], r.w.rel.Columns[k].Name)
			}
		}
	case *pglogrepl.BeginMessage:
		r.txn = r.txn[:0]
		r.inTxn = true
	case *pglogrepl.InsertMessage:
		if m.RelationID == r.relID {
			row, unchanged, err := r.row(m.Tuple)
			if err != nil {
				return err
			}
			r.txn = append(r.txn, cdcChange{kind: 'I', new: row, unchanged: unchanged})
		}
	case *pglogrepl.UpdateMessage:
		if m.RelationID == r.relID {
			row, unchanged, err := r.row(m.NewTuple)
			if err != nil {
				return err
			}
			ch := cdcChange{kind: 'U', new: row, unchanged: unchanged}
			if m.OldTuple != nil {
				if ch.old, _, err = r.row(m.OldTuple); err != nil {
					return err
				}
			}
			r.txn = append(r.txn, ch)
		}
	case *pglogrepl.DeleteMessage:
		if m.RelationID == r.relID && m.OldTuple != nil {
			old, _, err := r.row(m.OldTuple)
			if err != nil {
				return err
			}
			r.txn = append(r.txn, cdcChange{kind: 'D', old: old})
		}
	case *pglogrepl.TruncateMessage:
		for _, id := range m.RelationIDs {
			if id == r.relID {
				r.txn = append(r.txn, cdcChange{kind: 'T'})
			}
		}
	case *pglogrepl.CommitMessage:
		end := uint64(m.TransactionEndLSN)
		r.inTxn = false
		if end <= r.applied {
			r.txn = r.txn[:0]
			return nil // applied before a restart or reconnection
		}
		epoch, err := r.w.applyCDC(r.txn, end)
		r.txn = r.txn[:0]
		if err != nil {
			if r.w.isDropped() {
				return errTableDropped
			}
			return err
		}
		r.applied = end
		r.pending = append(r.pending, cdcPending{epoch: epoch, lsn: end})
	}
	return nil
}

func mapped(colMap []int, col int) bool {
	for _, c := range colMap {
		if c == col {
			return true
		}
	}
	return false
}

// row converts a tuple to a row of the table; unchanged is non-nil when
// some column was not sent (unchanged TOAST).
func (r *cdcReader) row(t *pglogrepl.TupleData) (row []types.Datum, unchanged []bool, err error) {
	row = make([]types.Datum, len(r.w.types))
	for i := range row {
		row[i] = types.Null
	}
	if t == nil {
		return row, nil, nil
	}
	for i, c := range t.Columns {
		if i >= len(r.colMap) || r.colMap[i] < 0 {
			continue
		}
		j := r.colMap[i]
		switch c.DataType {
		case 'n':
		case 'u':
			if unchanged == nil {
				unchanged = make([]bool, len(row))
			}
			unchanged[j] = true
		case 't':
			s := string(c.Data)
			if row[j], err = cdcDatum(r.w.types[j], &s); err != nil {
				return nil, nil, err
			}
		default:
			return nil, nil, fmt.Errorf("cdc: unexpected tuple data type %q", c.DataType)
		}
	}
	return row, unchanged, nil
}

// confirm tells the upstream the LSN up to which streamsql has committed
// the changes (the end of the last applied transaction whose epoch is
// committed).
func (r *cdcReader) confirm(ctx context.Context, conn *pgconn.PgConn, reply bool) error {
	committed := r.e.coord.Committed()
	n := 0
	for n < len(r.pending) && r.pending[n].epoch <= committed {
		r.confirmed.Store(r.pending[n].lsn)
		n++
	}
	r.pending = append(r.pending[:0], r.pending[n:]...)
	if len(r.pending) == 0 && !r.inTxn && r.idle > r.confirmed.Load() {
		r.confirmed.Store(r.idle)
	}
	lsn := pglogrepl.LSN(r.confirmed.Load())
	return pglogrepl.SendStandbyStatusUpdate(ctx, conn, pglogrepl.StandbyStatusUpdate{
		WALWritePosition: lsn, WALFlushPosition: lsn, WALApplyPosition: lsn, ReplyRequested: reply})
}
