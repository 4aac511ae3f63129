package pgtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// query runs sql on conn and returns the first column of the first row.
func query(t *testing.T, conn *pgconn.PgConn, sql string) string {
	t.Helper()
	results, err := conn.Exec(context.Background(), sql).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	last := results[len(results)-1]
	if len(last.Rows) == 0 {
		return ""
	}
	return string(last.Rows[0][0])
}

func connect(t *testing.T, url string) *pgconn.PgConn {
	t.Helper()
	conn, err := pgconn.Connect(context.Background(), url)
	if err != nil {
		t.Fatalf("connect %s: %v", url, err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func TestStartStop(t *testing.T) {
	t.Parallel()
	s, err := Start(Options{Settings: map[string]string{"work_mem": "8MB"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(s.URL, "postgres://postgres@127.0.0.1:") || s.Port == 0 {
		t.Fatalf("URL %q, port %d", s.URL, s.Port)
	}
	conn := connect(t, s.URL)
	if got := query(t, conn, "CREATE TABLE t (a int); INSERT INTO t VALUES (1), (2); SELECT sum(a) FROM t"); got != "3" {
		t.Fatalf("sum = %q", got)
	}
	for setting, want := range map[string]string{
		"fsync": "off", "full_page_writes": "off", "synchronous_commit": "on", "work_mem": "8MB",
		"server_encoding": "UTF8", "lc_collate": "C", "listen_addresses": "127.0.0.1",
	} {
		if got := query(t, conn, "SHOW "+setting); got != want {
			t.Errorf("%s = %q, want %q", setting, got, want)
		}
	}
	if os.Geteuid() == 0 {
		if got := query(t, conn, "SELECT current_setting('data_directory')"); !strings.HasPrefix(got, s.Dir) {
			t.Errorf("data_directory %q is not under %q", got, s.Dir)
		}
	}

	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("directory %s still there after Stop: %v", s.Dir, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if c, err := pgconn.Connect(ctx, s.URL); err == nil {
		c.Close(ctx)
		t.Fatal("connected after Stop")
	}
	if err := s.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
}

func TestSynchronousCommitAndRestart(t *testing.T) {
	t.Parallel()
	s := StartT(t, Options{SynchronousCommit: true})
	conn := connect(t, s.URL)
	for _, setting := range []string{"fsync", "synchronous_commit", "full_page_writes"} {
		if got := query(t, conn, "SHOW "+setting); got != "on" {
			t.Errorf("%s = %q, want on", setting, got)
		}
	}
	query(t, conn, "CREATE TABLE t (a int); INSERT INTO t VALUES (1), (2)")

	port := s.Port
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	if s.Port != port {
		t.Errorf("port changed across Restart: %d -> %d", port, s.Port)
	}
	if _, err := conn.Exec(context.Background(), "SELECT 1").ReadAll(); err == nil {
		t.Error("old session survived Restart")
	}
	conn2 := connect(t, s.URL)
	if got := query(t, conn2, "SELECT count(*) FROM t"); got != "2" {
		t.Fatalf("count after Restart = %q, want 2", got)
	}
}

// fatalRecorder is a testing.TB whose Fatalf records the message and ends
// the calling goroutine, as the real one does.
type fatalRecorder struct {
	testing.TB
	mu  sync.Mutex
	msg string
}

func (r *fatalRecorder) Helper() {}

func (r *fatalRecorder) Fatalf(format string, args ...any) {
	r.mu.Lock()
	r.msg = fmt.Sprintf(format, args...)
	r.mu.Unlock()
	runtime.Goexit()
}

func TestNotInstalled(t *testing.T) {
	t.Setenv(BinDirEnv, t.TempDir())
	_, err := Start(Options{})
	if !errors.Is(err, ErrNotInstalled) {
		t.Fatalf("Start with an empty %s: %v, want ErrNotInstalled", BinDirEnv, err)
	}

	r := &fatalRecorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		StartT(r, Options{})
		t.Error("StartT returned without failing")
	}()
	<-done
	if !strings.Contains(r.msg, "PostgreSQL server binaries not found: install postgresql") {
		t.Errorf("StartT message %q is not the loud one", r.msg)
	}
}
