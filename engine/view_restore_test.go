package engine

import (
	"context"
	"log/slog"
	"runtime"
	"strings"
	"testing"

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
			return strings.Count(string(buf[:n]), "outbox.(*Delivery).run")
		}
		buf = make([]byte, 2*len(buf))
	}
}

// TestRestoreViewFailureClosesDataflow restores a PostgreSQL sink whose
// upstream table has no running dataflow: the restore fails after the
// sink's dataflow is built, and must close it, stopping the sink's
// delivery goroutine (which a restart would otherwise leak).
func TestRestoreViewFailureClosesDataflow(t *testing.T) {
	ctx := context.Background()
	e, err := Open(Options{DataDir: ":memory:", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s, err := e.Connect(ctx, map[string]string{"user": "postgres", "database": "dev"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, q := range []string{
		"CREATE TABLE t (k int PRIMARY KEY, v int)",
		"CREATE SINK s AS SELECT k, v FROM t WITH (connector = 'blackhole')",
	} {
		if err := s.Query(ctx, q, discardWriter{}); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	var sink, table *catalog.Relation
	for _, r := range e.cat.All() {
		switch r.Name {
		case "s":
			sink = r
		case "t":
			table = r
		}
	}
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
	err = e.restoreView(&restored)
	e.mu.Lock()
	e.tables[table.ID] = w
	e.mu.Unlock()
	if err == nil {
		t.Fatal("restore of a sink over a table without a dataflow succeeded")
	}
	if n := deliveryGoroutines(); n != before {
		t.Errorf("after a failed restore: %d sink delivery goroutines, want %d: %v", n, before, err)
	}
}
