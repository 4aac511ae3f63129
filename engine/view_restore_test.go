package engine

import (
	"context"
	"log/slog"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/connector/postgres"
	"github.com/streamsql/streamsql/pgwire"
)

// discardWriter is a pgwire.ResultWriter that drops every result.
type discardWriter struct{}

func (discardWriter) BeginRows([]pgwire.Column) error      { return nil }
func (discardWriter) WriteRows(arrow.RecordBatch) error    { return nil }
func (discardWriter) Complete(string) error                { return nil }
func (discardWriter) EmptyQuery() error                    { return nil }
func (discardWriter) Notice(string, string, string) error  { return nil }
func (discardWriter) ParameterStatus(string, string) error { return nil }

// deliveryGoroutines counts the goroutines delivering a sink's outbox.
func deliveryGoroutines() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Count(string(buf[:n]), "outbox.(*Delivery).run(") // a frame, not a "created by"
		}
		buf = make([]byte, 2*len(buf))
	}
}

// openSession opens an in-memory engine and a session of it, both closed
// when t ends.
func openSession(t *testing.T) (*Engine, pgwire.Session) {
	t.Helper()
	e, err := Open(Options{DataDir: ":memory:", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	s, err := e.Connect(context.Background(), map[string]string{"user": "postgres", "database": "dev"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return e, s
}

// query runs each of qs in s.
func query(t *testing.T, s pgwire.Session, qs ...string) {
	t.Helper()
	for _, q := range qs {
		if err := s.Query(context.Background(), q, discardWriter{}); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// relation returns the catalog entry named name, or nil.
func relation(e *Engine, name string) *catalog.Relation {
	for _, r := range e.cat.All() {
		if r.Name == name {
			return r
		}
	}
	return nil
}

// TestRestoreViewFailureClosesDataflow restores a PostgreSQL sink whose
// upstream table has no running dataflow: the restore fails after the
// sink's dataflow is built, and must close it, stopping the sink's
// delivery goroutine (which a restart would otherwise leak).
func TestRestoreViewFailureClosesDataflow(t *testing.T) {
	e, s := openSession(t)
	query(t, s, "CREATE TABLE t (k int PRIMARY KEY, v int)",
		"CREATE SINK s AS SELECT k, v FROM t WITH (connector = 'blackhole')")
	sink, table := relation(e, "s"), relation(e, "t")
	// The same sink as one stored with connector 'postgres': its restore
	// starts the delivery without contacting PostgreSQL.
	restored := *sink
	restored.Options = map[string]string{"connector": "postgres", "host": "127.0.0.1", "port": "1",
		"user": "postgres", "table": "s", "type": "upsert", postgres.ProgressIDOption: "test"}
	before := deliveryGoroutines()
	e.mu.Lock()
	w := e.tables[table.ID]
	delete(e.tables, table.ID)
	e.mu.Unlock()
	err := e.restoreView(&restored)
	e.mu.Lock()
	e.tables[table.ID] = w
	e.mu.Unlock()
	if err == nil {
		t.Fatal("restore of a sink over a table without a dataflow succeeded")
	}
	// A stopped delivery goroutine may still be returning from run (its
	// frame shows until it is gone): give it a moment, a leaked one retries
	// forever.
	n := deliveryGoroutines()
	for i := 0; i < 500 && n != before; i++ {
		time.Sleep(10 * time.Millisecond)
		n = deliveryGoroutines()
	}
	if n != before {
		t.Errorf("after a failed restore: %d sink delivery goroutines, want %d: %v", n, before, err)
	}
}

// TestRestoreViewReaderFailureStopsReaders restores a sink over two
// sources whose second reader does not open: the restore fails and stops
// the first reader, which was opened but never started, and the sink's
// delivery (the restore returning at all checks that stopping a reader
// that never ran does not wait forever).
func TestRestoreViewReaderFailureStopsReaders(t *testing.T) {
	e, s := openSession(t)
	query(t, s,
		"CREATE SOURCE a (id bigint) WITH (connector = 'datagen', fields.id.kind = 'sequence', datagen.rows.per.second = '0')",
		"CREATE SOURCE b (id bigint) WITH (connector = 'datagen', fields.id.kind = 'sequence', datagen.rows.per.second = '0')",
		"CREATE SINK s AS SELECT id FROM a UNION ALL SELECT id FROM b WITH (connector = 'blackhole')")
	restored := *relation(e, "s")
	restored.Options = map[string]string{"connector": "postgres", "host": "127.0.0.1", "port": "1",
		"user": "postgres", "table": "s", "type": "append-only", postgres.ProgressIDOption: "test"}
	b := relation(e, "b")
	before := deliveryGoroutines()
	opts := b.Options
	b.Options = map[string]string{"connector": "none"}
	err := e.restoreView(&restored)
	b.Options = opts
	if err == nil || !strings.Contains(err.Error(), "none") {
		t.Fatalf("restore with a reader that does not open: %v, want its error", err)
	}
	n := deliveryGoroutines()
	for i := 0; i < 500 && n != before; i++ {
		time.Sleep(10 * time.Millisecond)
		n = deliveryGoroutines()
	}
	if n != before {
		t.Errorf("after a failed restore: %d sink delivery goroutines, want %d: %v", n, before, err)
	}
}
