package postgres

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/streamsql/streamsql/connector/outbox"
)

// deliveryTimeout bounds one attempt to connect or to apply a batch.
const deliveryTimeout = time.Minute

// stageTable is the temporary table an upsert sink copies a batch's lines
// into, on its connection.
const stageTable = "streamsql_sink_stage"

// target is the outbox.Target of a PostgreSQL sink: it applies batches of
// committed epochs to the target table, each batch in one transaction
// that also sets the sink's progress row to the batch's last epoch.
//
// The transaction first locks the progress row (SELECT ... FOR UPDATE)
// and skips the epochs at or below it: a transaction that an earlier
// connection (or an earlier process) left committing is waited for, so no
// epoch is applied twice whatever the timing.
type target struct {
	cfg  *Config
	conn *pgx.Conn
	// The statements, built at connect from the table's column types.
	copySQL, deleteSQL, upsertSQL, progressSQL string
	buf                                        []byte
}

func (t *target) Connect(ctx context.Context) (uint64, error) {
	ctx, cancel := context.WithTimeout(ctx, deliveryTimeout)
	defer cancel()
	conn, err := t.cfg.connect(ctx)
	if err != nil {
		return 0, err
	}
	epoch, err := t.prepare(ctx, conn)
	if err != nil {
		conn.Close(context.Background())
		return 0, t.cfg.serverError(err)
	}
	t.conn = conn
	return epoch, nil
}

// prepare checks the table again (it may have changed while the sink was
// away), builds the statements, creates the stage table and reads the
// progress row.
func (t *target) prepare(ctx context.Context, conn *pgx.Conn) (uint64, error) {
	tbl, err := describe(ctx, conn, t.cfg)
	if err != nil {
		return 0, err
	}
	if err := ensureProgress(ctx, conn, t.cfg); err != nil {
		return 0, err
	}
	t.buildStatements(tbl)
	if t.cfg.Upsert {
		var cols strings.Builder
		for i := range t.cfg.Columns {
			fmt.Fprintf(&cols, ", c%d text", i)
		}
		if _, err := conn.Exec(ctx, "CREATE TEMPORARY TABLE "+stageTable+" (seq bigint, op text"+cols.String()+") ON COMMIT DELETE ROWS"); err != nil {
			return 0, err
		}
	}
	return readProgress(ctx, conn, t.cfg, false)
}

// buildStatements builds the statements that apply a batch. An upsert
// batch is copied into the stage table with a sequence number per line;
// the last line of each key says whether the key ends deleted or with
// that row: the deleted keys are deleted, the others upserted.
func (t *target) buildStatements(tbl *table) {
	cfg := t.cfg
	name := pgx.Identifier{cfg.Schema, cfg.Table}.Sanitize()
	t.progressSQL = "UPDATE " + pgx.Identifier{cfg.Schema, ProgressTable}.Sanitize() + " SET epoch = $2 WHERE sink_id = $1"
	var cols []string
	for _, c := range cfg.Columns {
		cols = append(cols, pgx.Identifier{c.Name}.Sanitize())
	}
	if !cfg.Upsert {
		t.copySQL = "COPY " + name + " (" + strings.Join(cols, ", ") + ") FROM STDIN"
		return
	}
	t.copySQL = "COPY pg_temp." + stageTable + " FROM STDIN"
	var keys, match, casts, set, conflict []string
	for _, k := range cfg.Key {
		keys = append(keys, fmt.Sprintf("c%d", k))
		match = append(match, fmt.Sprintf("t.%s = s.c%d::%s", cols[k], k, tbl.types[k]))
		conflict = append(conflict, cols[k])
	}
	for i := range cfg.Columns {
		casts = append(casts, fmt.Sprintf("c%d::%s", i, tbl.types[i]))
		if !slices.Contains(cfg.Key, i) {
			set = append(set, cols[i]+" = EXCLUDED."+cols[i])
		}
	}
	last := "(SELECT DISTINCT ON (" + strings.Join(keys, ", ") + ") * FROM pg_temp." + stageTable +
		" ORDER BY " + strings.Join(keys, ", ") + ", seq DESC) s"
	t.deleteSQL = "DELETE FROM " + name + " t USING " + last + " WHERE s.op = 'D' AND " + strings.Join(match, " AND ")
	t.upsertSQL = "INSERT INTO " + name + " (" + strings.Join(cols, ", ") + ") SELECT " + strings.Join(casts, ", ") +
		" FROM " + last + " WHERE s.op = 'I' ON CONFLICT (" + strings.Join(conflict, ", ") + ") DO "
	if len(set) == 0 {
		t.upsertSQL += "NOTHING"
	} else {
		t.upsertSQL += "UPDATE SET " + strings.Join(set, ", ")
	}
}

func (t *target) Deliver(ctx context.Context, batch []outbox.Epoch) error {
	ctx, cancel := context.WithTimeout(ctx, deliveryTimeout)
	defer cancel()
	tx, err := t.conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	applied, err := readProgress(ctx, tx, t.cfg, true)
	if err != nil {
		return err
	}
	for len(batch) > 0 && batch[0].Epoch <= applied {
		batch = batch[1:]
	}
	if len(batch) == 0 {
		return nil
	}
	if err := t.apply(ctx, batch); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, t.progressSQL, t.cfg.ProgressID, int64(batch[len(batch)-1].Epoch)); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// apply writes the batch's changes in the open transaction.
func (t *target) apply(ctx context.Context, batch []outbox.Epoch) error {
	defer func() { t.buf = t.buf[:0] }()
	pc := t.conn.PgConn()
	if !t.cfg.Upsert {
		var chunks []io.Reader
		for _, e := range batch {
			for _, c := range e.Chunks {
				chunks = append(chunks, bytes.NewReader(c))
			}
		}
		_, err := pc.CopyFrom(ctx, io.MultiReader(chunks...), t.copySQL)
		return err
	}
	seq := 0
	for _, e := range batch {
		for _, c := range e.Chunks {
			for len(c) > 0 {
				n := bytes.IndexByte(c, '\n') + 1
				if n == 0 {
					return fmt.Errorf("postgres sink %s: corrupt outbox chunk of epoch %d", t.cfg.Name, e.Epoch)
				}
				t.buf = strconv.AppendInt(t.buf, int64(seq), 10)
				t.buf = append(t.buf, '\t')
				t.buf = append(t.buf, c[:n]...)
				c = c[n:]
				seq++
			}
		}
	}
	if _, err := pc.CopyFrom(ctx, bytes.NewReader(t.buf), t.copySQL); err != nil {
		return err
	}
	if _, err := t.conn.Exec(ctx, t.deleteSQL); err != nil {
		return err
	}
	_, err := t.conn.Exec(ctx, t.upsertSQL)
	return err
}

func (t *target) Disconnect() {
	if t.conn != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = t.conn.Close(ctx)
		t.conn = nil
	}
}
