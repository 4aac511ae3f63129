// Package testserver runs an in-process streamsql server (engine and
// PostgreSQL protocol on a loopback port) for tests, and can restart it on the
// same data directory.
package testserver

import (
	"context"
	"crypto/tls"
	"fmt"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"log/slog"
	"net"
	"os"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/jackc/pgx/v5"
	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/pgwire"
)

// Server is a running in-process server.
type Server struct {
	t      testing.TB
	opts   engine.Options
	memFS  *vfs.MemFS // the crashable filesystem, if Options.Crashable
	Engine *engine.Engine
	srv    *pgwire.Server
	ln     net.Listener
	URL    string
	// Addr is the address the server listens on (host:port).
	Addr    string
	DataDir string
	tls     *tls.Config
	maxConn int
	// checked is the engine's allocator when the test gave none: every
	// Arrow buffer must be released by the time the engine is closed.
	checked *memory.CheckedAllocator
}

// Options configures Start.
type Options struct {
	// DataDir defaults to a new temporary directory.
	DataDir string
	// BarrierInterval defaults to 50ms so tests do not wait.
	BarrierInterval time.Duration
	// CheckpointFrequency: see engine.Options.
	CheckpointFrequency int
	// FS is the state store's filesystem (default: the operating system's).
	FS vfs.FS
	// Crashable keeps the data in a crashable in-memory filesystem, so that
	// Kill can simulate kill -9 (FS and DataDir are ignored).
	Crashable bool
	// Clock, if set, is the time barriers carry (now() in views).
	Clock func() time.Time
	// Mem allocates the engine's Arrow memory (default: a checked allocator
	// over Go's, which fails the test if the engine leaks a buffer).
	Mem memory.Allocator
	// MaxUncommittedState and MemoryLimit: see engine.Options.
	MaxUncommittedState int64
	MemoryLimit         int64
	// BackfillChunkRows and StreamingParallelism: see engine.Options.
	BackfillChunkRows    int
	StreamingParallelism int
	// Auth and SuperuserPassword: see engine.Options (default: auto, no
	// password, so every loopback client is trusted).
	Auth              string
	SuperuserPassword string
	// RetainHistory: see engine.Options.
	RetainHistory time.Duration
	// TLS and MaxConnections: see pgwire.Options.
	TLS            *tls.Config
	MaxConnections int
}

// Start starts a server; it is stopped at the end of the test.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	var memFS *vfs.MemFS
	if opts.Crashable {
		memFS = vfs.NewCrashableMem()
		opts.FS, opts.DataDir = memFS, "/data"
	}
	if opts.DataDir == "" {
		opts.DataDir = t.TempDir()
	}
	if opts.BarrierInterval == 0 {
		opts.BarrierInterval = 50 * time.Millisecond
	}
	var checked *memory.CheckedAllocator
	if opts.Mem == nil {
		checked = memory.NewCheckedAllocator(memory.NewGoAllocator())
		opts.Mem = checked
	}
	level := slog.LevelWarn
	if os.Getenv("STREAMSQL_TEST_LOG") != "" {
		level = slog.LevelDebug
	}
	s := &Server{t: t, DataDir: opts.DataDir, memFS: memFS, tls: opts.TLS, maxConn: opts.MaxConnections, checked: checked, opts: engine.Options{
		Auth:                 opts.Auth,
		SuperuserPassword:    opts.SuperuserPassword,
		Clock:                opts.Clock,
		Mem:                  opts.Mem,
		DataDir:              opts.DataDir,
		BarrierInterval:      opts.BarrierInterval,
		CheckpointFrequency:  opts.CheckpointFrequency,
		BackfillChunkRows:    opts.BackfillChunkRows,
		StreamingParallelism: opts.StreamingParallelism,
		RetainHistory:        opts.RetainHistory,
		MaxUncommittedState:  opts.MaxUncommittedState,
		MemoryLimit:          opts.MemoryLimit,
		FS:                   opts.FS,
		Logger:               slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})),
	}}
	if err := s.start(); err != nil {
		t.Fatalf("starting streamsql: %v", err)
	}
	t.Cleanup(func() { s.Stop() })
	return s
}

func (s *Server) start() error {
	eng, err := engine.Open(s.opts)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		eng.Close()
		return err
	}
	s.Engine, s.ln = eng, ln
	auth, err := eng.Authenticator()
	if err != nil {
		ln.Close()
		eng.Close()
		return err
	}
	s.srv = pgwire.NewServer(eng, pgwire.Options{Logger: s.opts.Logger, ServerVersion: engine.ServerVersion,
		Auth: auth, TLS: s.tls, MaxConnections: s.maxConn})
	go s.srv.Serve(ln)
	s.Addr = ln.Addr().String()
	s.URL = fmt.Sprintf("postgres://test@%s/dev?sslmode=disable", ln.Addr())
	return nil
}

// Stop shuts the server down cleanly (final checkpoint). Closing an engine
// whose store failed (Engine.Err) may report that failure again; it is not
// a test error.
func (s *Server) Stop() {
	if s.srv == nil {
		return
	}
	s.srv.Close()
	if err := s.Engine.Close(); err != nil && s.Engine.Err() == nil {
		s.t.Errorf("closing engine: %v", err)
	}
	s.srv, s.Engine = nil, nil
	if s.checked != nil {
		if n := s.checked.CurrentAlloc(); n != 0 {
			s.t.Errorf("Arrow memory leaked: %d bytes still allocated after the engine closed", n)
			s.checked.AssertSize(s.t, 0) // where each leaked buffer was allocated
		}
	}
}

// Restart stops the server and starts it again on the same data directory;
// the URL changes.
func (s *Server) Restart() error {
	s.Stop()
	return s.start()
}

// Kill simulates kill -9 of a Crashable server and starts it again: the new
// server sees exactly what the old one had synced when Kill was called.
func (s *Server) Kill() error {
	if s.memFS == nil {
		return fmt.Errorf("testserver: Kill needs a Crashable server")
	}
	crashed := s.memFS.CrashClone(vfs.CrashCloneCfg{})
	// The old engine goes on writing to the old filesystem until it is
	// closed; nothing of that reaches the clone.
	s.Stop()
	s.memFS, s.opts.FS = crashed, crashed
	return s.start()
}

// Conn opens a client connection using the simple query protocol.
func (s *Server) Conn(ctx context.Context) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(s.URL)
	if err != nil {
		return nil, err
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	return pgx.ConnectConfig(ctx, cfg)
}
