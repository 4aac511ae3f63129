package engine

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/connector/postgres"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// prepareCDCTable checks CREATE TABLE ... FROM source TABLE '...' against
// the source and the upstream table (it exists, is in the publication or is
// added to it, and has the declared columns by name and primary key), marks
// rel as fed by the source and takes its snapshot, which startCDCTable
// writes once the table exists. (A failure to create the table after that
// leaves its slot upstream.)
func (e *Engine) prepareCDCTable(ctx context.Context, cat *catalog.Catalog, stmt *ir.CreateTable, rel *catalog.Relation) (*cdcSnapshot, error) {
	stmtCtx := ctx // the snapshot may take longer than the checks
	src := cat.LookupIn(stmt.Schema, stmt.CDC.Source)
	if src == nil {
		src = cat.Lookup(stmt.CDC.Source)
	}
	if src == nil || src.Kind != catalog.Source {
		return nil, sqlerr.New(sqlerr.UndefinedObject, "source \"%s\" does not exist", stmt.CDC.Source)
	}
	if src.Options["connector"] != cdcConnector {
		return nil, sqlerr.New(sqlerr.WrongObjectType, "source \"%s\" is not a postgres-cdc source", src.Name)
	}
	cfg, err := parseCDCConfig(src.Options)
	if err != nil {
		return nil, err
	}
	schema, table, _ := strings.Cut(stmt.CDC.Table, ".")
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	conn, err := cfg.connect(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.Background())
	if err := checkCDCColumns(ctx, conn, cfg, stmt, schema, table); err != nil {
		return nil, err
	}
	if err := checkCDCKey(ctx, conn, cfg, stmt, schema, table); err != nil {
		return nil, err
	}
	var inPub bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_publication_tables WHERE pubname = $1 AND schemaname = $2 AND tablename = $3)",
		cfg.publication, schema, table).Scan(&inPub); err != nil {
		return nil, cfg.connectError(err)
	}
	if !inPub {
		if !cfg.createPublication {
			return nil, sqlerr.New(sqlerr.UndefinedObject, "upstream table %s is not in publication \"%s\"", stmt.CDC.Table, cfg.publication)
		}
		if _, err := conn.Exec(ctx, "ALTER PUBLICATION "+pgx.Identifier{cfg.publication}.Sanitize()+" ADD TABLE "+pgx.Identifier{schema, table}.Sanitize()); err != nil {
			return nil, cfg.connectError(err)
		}
	}
	rel.Options = map[string]string{"cdc.source": src.Name, "cdc.table": stmt.CDC.Table}
	rel.CDCOffsetTable = e.catSrc.allocIDs(1)[0]
	return readCDCSnapshot(stmtCtx, cfg, rel)
}

// cdcSourceOf returns the source relation feeding the CDC table rel.
func (e *Engine) cdcSourceOf(rel *catalog.Relation) (*catalog.Relation, error) {
	cat := e.cat.In(rel.Database)
	src := cat.LookupIn(rel.Schema, rel.Options["cdc.source"])
	if src == nil {
		src = cat.Lookup(rel.Options["cdc.source"])
	}
	if src == nil {
		return nil, sqlerr.New(sqlerr.UndefinedObject, "source \"%s\" of table %s does not exist", rel.Options["cdc.source"], rel.Name)
	}
	return src, nil
}

// startCDCTable writes the snapshot of a new CDC table and starts its
// replication. The snapshot is consistent with the slot: the slot was
// created with an exported snapshot, the table read in that snapshot, and
// the rows and the slot's consistent point are written in one epoch;
// replication then streams the transactions committed after that point.
// CREATE TABLE returns once the snapshot is committed.
func (e *Engine) startCDCTable(w *tableWriter, snap *cdcSnapshot) error {
	src, err := e.cdcSourceOf(w.rel)
	if err != nil {
		return err
	}
	cfg, err := parseCDCConfig(src.Options)
	if err != nil {
		return err
	}
	epoch, err := w.applyCDC(snap.changes, snap.lsn)
	if err != nil {
		return err
	}
	if err := e.awaitCommit(e.ctx, epoch); err != nil {
		return err
	}
	e.runCDC(cfg, w, snap.lsn)
	return nil
}

// restoreCDCTable resumes the replication of a CDC table after a restart,
// from the LSN committed with its rows; a table whose snapshot never
// committed takes it again.
func (e *Engine) restoreCDCTable(w *tableWriter) {
	e.actors.Add(1)
	go func() {
		defer e.actors.Done()
		// Nothing is written before every dataflow is restored (their
		// outputs are attached without locks): wait for the first barrier,
		// injected once the engine has started.
		if err := e.coord.WaitInjected(e.ctx, e.coord.Committed()+1); err != nil {
			return
		}
		src, err := e.cdcSourceOf(w.rel)
		if err != nil {
			e.log.Error("cdc: cannot resume", "table", w.rel.Name, "err", err)
			return
		}
		cfg, err := parseCDCConfig(src.Options)
		if err != nil {
			e.log.Error("cdc: cannot resume", "table", w.rel.Name, "err", err)
			return
		}
		lsn, err := committedCDCLSN(w.cdcOffset)
		for backoff := time.Second; err == nil && lsn == 0; backoff = min(2*backoff, 30*time.Second) {
			var snap *cdcSnapshot
			if snap, err = readCDCSnapshot(e.ctx, cfg, w.rel); err == nil {
				var epoch uint64
				if epoch, err = w.applyCDC(snap.changes, snap.lsn); err == nil {
					err = e.awaitCommit(e.ctx, epoch)
				}
				lsn = snap.lsn
				break
			}
			e.log.Warn("cdc: snapshot failed, retrying", "table", w.rel.Name, "err", err)
			err = nil
			select {
			case <-e.ctx.Done():
				return
			case <-time.After(backoff):
			}
		}
		if err != nil {
			e.log.Error("cdc: cannot resume", "table", w.rel.Name, "err", err)
			return
		}
		e.runCDC(cfg, w, lsn)
	}()
}

// cdcSnapshot is a CDC table's initial snapshot: changes that empty the
// table and insert the upstream's rows, and the slot's consistent point.
type cdcSnapshot struct {
	changes []cdcChange
	lsn     uint64
}

// readCDCSnapshot (re)creates the table's slot with an exported snapshot and
// reads the upstream table in it.
func readCDCSnapshot(ctx context.Context, cfg cdcConfig, rel *catalog.Relation) (*cdcSnapshot, error) {
	repl, err := pgconn.Connect(ctx, cfg.connString(true))
	if err != nil {
		return nil, cfg.connectError(err)
	}
	defer repl.Close(context.Background())
	slot := cdcSlotName(cfg, rel)
	// A slot left by a snapshot that never committed is useless: its
	// snapshot is gone.
	_ = pglogrepl.DropReplicationSlot(ctx, repl, slot, pglogrepl.DropReplicationSlotOptions{})
	res, err := pglogrepl.CreateReplicationSlot(ctx, repl, slot, "pgoutput",
		pglogrepl.CreateReplicationSlotOptions{Mode: pglogrepl.LogicalReplication, SnapshotAction: "EXPORT_SNAPSHOT"})
	if err != nil {
		return nil, cfg.connectError(err)
	}
	start, err := pglogrepl.ParseLSN(res.ConsistentPoint)
	if err != nil {
		return nil, err
	}
	conn, err := cfg.connect(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.Background())
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, cfg.connectError(err)
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(ctx, "SET TRANSACTION SNAPSHOT '"+res.SnapshotName+"'"); err != nil {
		return nil, cfg.connectError(err)
	}
	cols := rel.Columns
	ts := rel.Types()
	sel := make([]string, len(cols))
	for i, c := range cols {
		sel[i] = pgx.Identifier{c.Name}.Sanitize() + "::text"
	}
	schema, table, _ := strings.Cut(rel.Options["cdc.table"], ".")
	rows, err := tx.Query(ctx, "SELECT "+strings.Join(sel, ", ")+" FROM "+pgx.Identifier{schema, table}.Sanitize())
	if err != nil {
		return nil, cfg.connectError(err)
	}
	changes := []cdcChange{{kind: 'T'}}
	vals := make([]*string, len(cols))
	dest := make([]any, len(cols))
	for i := range vals {
		dest[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			rows.Close()
			return nil, cfg.connectError(err)
		}
		row := make([]types.Datum, len(cols))
		for i, v := range vals {
			if row[i], err = cdcDatum(ts[i], v); err != nil {
				rows.Close()
				return nil, err
			}
		}
		changes = append(changes, cdcChange{kind: 'I', new: row})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, cfg.connectError(err)
	}
	return &cdcSnapshot{changes: changes, lsn: uint64(start)}, nil
}

// checkCDCColumns checks the declared columns against the upstream
// table's: each is a column of it, by name (else 42703), whose values fit
// the declared type (else 42804): the same type or a narrower one (see
// postgres.Fits); unbounded text takes any upstream type, as its text.
// An upstream table that does not exist is 42P01.
func checkCDCColumns(ctx context.Context, conn *pgx.Conn, cfg cdcConfig, stmt *ir.CreateTable, schema, table string) error {
	rows, err := conn.Query(ctx, `SELECT a.attname, a.atttypid, a.atttypmod, t.typelem, format_type(a.atttypid, a.atttypmod)
		FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
		JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_type t ON t.oid = a.atttypid
		WHERE n.nspname = $1 AND c.relname = $2 AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`, schema, table)
	if err != nil {
		return cfg.connectError(err)
	}
	type upstreamColumn struct {
		name, typeName string
		oid, elem      uint32
		typmod         int32
	}
	var upstream []upstreamColumn
	var names []string
	for rows.Next() {
		var c upstreamColumn
		if err := rows.Scan(&c.name, &c.oid, &c.typmod, &c.elem, &c.typeName); err != nil {
			return cfg.connectError(err)
		}
		upstream, names = append(upstream, c), append(names, c.name)
	}
	if err := rows.Err(); err != nil {
		return cfg.connectError(err)
	}
	if len(upstream) == 0 {
		return sqlerr.New(sqlerr.UndefinedTable, "upstream table %s.%s does not exist at %s", schema, table, cfg.addr())
	}
	for _, c := range stmt.Columns {
		i := slices.Index(names, c.Name)
		if i < 0 {
			return sqlerr.New(sqlerr.UndefinedColumn, "column \"%s\" is not a column of upstream table %s.%s (its columns: %s)", c.Name, schema, table, strings.Join(names, ", "))
		}
		u := upstream[i]
		if c.Type.Kind == types.Text && c.Type.Width == 0 {
			continue
		}
		if from, ok := postgres.TypeOf(u.oid, u.typmod, u.elem); !ok || !postgres.Fits(from, c.Type) {
			return sqlerr.New(sqlerr.DatatypeMismatch, "column \"%s\" is declared %s, but upstream column %s.%s.%s is %s, whose values do not all fit",
				c.Name, c.Type, schema, table, u.name, u.typeName).
				WithHint("Declare the column with the upstream type, a wider one, or text.")
		}
	}
	return nil
}

// cdcDatum parses an upstream text value (nil: NULL).
func cdcDatum(t types.T, v *string) (types.Datum, error) {
	if v == nil {
		return types.Null, nil
	}
	return types.ParseTextIn(t, *v, types.UTC)
}

// checkCDCKey checks that the declared primary key is the upstream table's:
// deletes and key changes arrive with the upstream key only.
func checkCDCKey(ctx context.Context, conn *pgx.Conn, cfg cdcConfig, stmt *ir.CreateTable, schema, table string) error {
	rows, err := conn.Query(ctx, `SELECT a.attname FROM pg_index i
		JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
		WHERE i.indrelid = (quote_ident($1) || '.' || quote_ident($2))::regclass AND i.indisprimary ORDER BY a.attname`, schema, table)
	if err != nil {
		return cfg.connectError(err)
	}
	upstream, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return cfg.connectError(err)
	}
	var declared []string
	for _, k := range stmt.PrimaryKey {
		declared = append(declared, stmt.Columns[k].Name)
	}
	slices.Sort(declared)
	if !slices.Equal(declared, upstream) {
		return sqlerr.New(sqlerr.InvalidObjectDefinition, "PRIMARY KEY (%s) is not the primary key of upstream table %s.%s (%s)",
			strings.Join(declared, ", "), schema, table, strings.Join(upstream, ", "))
	}
	return nil
}
