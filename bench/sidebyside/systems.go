package sidebyside

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"time"

	_ "github.com/duckdb/duckdb-go/v2" // the "duckdb" database/sql driver
	"github.com/jackc/pgx/v5"
	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/internal/pgtest"
	"github.com/streamsql/streamsql/pgwire"
)

// System is one database under test, driven by SQL text. Its methods are not
// safe for concurrent use.
type System interface {
	// Name is the system's display name.
	Name() string
	// Exec runs one statement and returns the rows it affected.
	Exec(ctx context.Context, stmt string) (int64, error)
	// Query runs a query whose columns are all integers (NULL is an error).
	Query(ctx context.Context, query string) ([][]int64, error)
	// CreateView defines the view name as query over the current contents
	// of its tables. It may be called before the tables are loaded.
	CreateView(ctx context.Context, name, query string) error
	// RefreshView makes the view created by CreateView reflect every
	// statement run so far; it returns at once where views are maintained.
	RefreshView(ctx context.Context, name, query string) error
	// Close stops the system and removes its data.
	Close() error
}

// System names, as given to --systems.
const (
	StreamSQL = "streamsql"
	Postgres  = "postgres"
	DuckDB    = "duckdb"
)

// Open starts the named system on a fresh temporary data directory.
func Open(ctx context.Context, name string) (System, error) {
	switch name {
	case StreamSQL:
		return openStreamSQL(ctx)
	case Postgres:
		return openPostgres(ctx)
	case DuckDB:
		return openDuckDB(ctx)
	}
	return nil, fmt.Errorf("unknown system %q (want %s, %s or %s)", name, StreamSQL, Postgres, DuckDB)
}

// DisplayName is the name a report shows for a system.
func DisplayName(name string) string {
	switch name {
	case StreamSQL:
		return "streamsql"
	case Postgres:
		return "PostgreSQL"
	case DuckDB:
		return "DuckDB"
	}
	return name
}

// pgxSystem is a system reached over the PostgreSQL protocol on one
// connection, with the simple query protocol (as psql sends statements).
type pgxSystem struct {
	name string
	conn *pgx.Conn
	// maintained says views are kept up to date by the system itself.
	maintained bool
	stop       func() error
}

func connectPgx(ctx context.Context, url string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, err
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	return pgx.ConnectConfig(ctx, cfg)
}

// openStreamSQL runs streamsql in this process: the engine on an on-disk
// data directory and its PostgreSQL protocol server on a loopback port, as
// `streamsql --data-dir DIR` would with default settings.
func openStreamSQL(ctx context.Context) (System, error) {
	dir, err := os.MkdirTemp("", "streamsql-sidebyside-")
	if err != nil {
		return nil, err
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	eng, err := engine.Open(engine.Options{DataDir: dir, BarrierInterval: time.Second, Logger: log})
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		eng.Close()
		os.RemoveAll(dir)
		return nil, err
	}
	srv := pgwire.NewServer(eng, pgwire.Options{Logger: log, ServerVersion: engine.ServerVersion})
	go srv.Serve(ln)
	stop := func() error {
		srv.Close()
		err := eng.Close()
		if rmErr := os.RemoveAll(dir); err == nil {
			err = rmErr
		}
		return err
	}
	conn, err := connectPgx(ctx, fmt.Sprintf("postgres://bench@%s/dev?sslmode=disable", ln.Addr()))
	if err != nil {
		stop()
		return nil, err
	}
	return &pgxSystem{name: StreamSQL, conn: conn, maintained: true, stop: stop}, nil
}

// openPostgres starts a private PostgreSQL server (binaries from pg_config
// --bindir) with durable commits, like streamsql's.
func openPostgres(ctx context.Context) (System, error) {
	srv, err := pgtest.Start(pgtest.Options{SynchronousCommit: true})
	if err != nil {
		return nil, err
	}
	conn, err := connectPgx(ctx, srv.URL)
	if err != nil {
		srv.Stop()
		return nil, err
	}
	return &pgxSystem{name: Postgres, conn: conn, stop: srv.Stop}, nil
}

func (s *pgxSystem) Name() string { return s.name }

func (s *pgxSystem) Exec(ctx context.Context, stmt string) (int64, error) {
	tag, err := s.conn.Exec(ctx, stmt)
	if err != nil {
		return 0, fmt.Errorf("%s: %s: %w", s.name, stmt, err)
	}
	return tag.RowsAffected(), nil
}

func (s *pgxSystem) Query(ctx context.Context, query string) ([][]int64, error) {
	rows, err := s.conn.Query(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", s.name, query, err)
	}
	defer rows.Close()
	var out [][]int64
	for rows.Next() {
		row := make([]int64, len(rows.FieldDescriptions()))
		dst := make([]any, len(row))
		for i := range row {
			dst[i] = &row[i]
		}
		if err := rows.Scan(dst...); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", s.name, query, err)
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %s: %w", s.name, query, err)
	}
	return out, nil
}

func (s *pgxSystem) CreateView(ctx context.Context, name, query string) error {
	_, err := s.Exec(ctx, fmt.Sprintf("CREATE MATERIALIZED VIEW %s AS %s", name, query))
	return err
}

func (s *pgxSystem) RefreshView(ctx context.Context, name, _ string) error {
	if s.maintained {
		return nil
	}
	_, err := s.Exec(ctx, "REFRESH MATERIALIZED VIEW "+name)
	return err
}

func (s *pgxSystem) Close() error {
	s.conn.Close(context.Background())
	return s.stop()
}

// duckSystem is DuckDB in this process on a database file in a temporary
// directory, on one connection. It has no maintained views: a view is a
// table that RefreshView computes again from the query.
type duckSystem struct {
	dir  string
	db   *sql.DB
	conn *sql.Conn
}

func openDuckDB(ctx context.Context) (System, error) {
	dir, err := os.MkdirTemp("", "duckdb-sidebyside-")
	if err != nil {
		return nil, err
	}
	db, err := sql.Open("duckdb", filepath.Join(dir, "bench.duckdb"))
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		os.RemoveAll(dir)
		return nil, err
	}
	return &duckSystem{dir: dir, db: db, conn: conn}, nil
}

func (s *duckSystem) Name() string { return DuckDB }

func (s *duckSystem) Exec(ctx context.Context, stmt string) (int64, error) {
	res, err := s.conn.ExecContext(ctx, stmt)
	if err != nil {
		return 0, fmt.Errorf("duckdb: %s: %w", stmt, err)
	}
	return res.RowsAffected()
}

func (s *duckSystem) Query(ctx context.Context, query string) ([][]int64, error) {
	rows, err := s.conn.QueryContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("duckdb: %s: %w", query, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out [][]int64
	for rows.Next() {
		row := make([]int64, len(cols))
		dst := make([]any, len(row))
		for i := range row {
			dst[i] = &row[i]
		}
		if err := rows.Scan(dst...); err != nil {
			return nil, fmt.Errorf("duckdb: %s: %w", query, err)
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("duckdb: %s: %w", query, err)
	}
	return out, nil
}

func (s *duckSystem) CreateView(ctx context.Context, name, query string) error {
	return s.RefreshView(ctx, name, query)
}

func (s *duckSystem) RefreshView(ctx context.Context, name, query string) error {
	_, err := s.Exec(ctx, fmt.Sprintf("CREATE OR REPLACE TABLE %s AS %s", name, query))
	return err
}

func (s *duckSystem) Close() error {
	s.conn.Close()
	err := s.db.Close()
	if rmErr := os.RemoveAll(s.dir); err == nil {
		err = rmErr
	}
	return err
}
