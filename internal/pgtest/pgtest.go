// Package pgtest starts private, throwaway PostgreSQL servers for tests and
// benchmarks: the differential tests compare streamsql's views with the same
// queries run by PostgreSQL, and benchmarks measure PostgreSQL side by side.
//
// Each Server is a fresh cluster in its own temporary directory, listening on
// a free loopback port with trust authentication for the superuser postgres.
// The binaries come from $STREAMSQL_PG_BINDIR if set, else from
// `pg_config --bindir`, else from the PATH and the usual Debian and Red Hat
// install directories. PostgreSQL refuses to run as root, so when the caller
// is root the cluster belongs to, and the server runs as, the `postgres` OS
// user.
//
// A Server's methods are not safe for concurrent use; the connections made to
// it are ordinary PostgreSQL connections.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// BinDirEnv names the environment variable that, when set, names the
// directory holding initdb and postgres; it takes precedence over pg_config.
const BinDirEnv = "STREAMSQL_PG_BINDIR"

// ErrNotInstalled is wrapped by the error Start returns when the PostgreSQL
// server binaries cannot be found.
var ErrNotInstalled = errors.New("PostgreSQL server binaries not found: install postgresql " +
	"(pg_config --bindir must name a directory holding initdb and postgres; on Debian: " +
	"apt-get install postgresql) or set " + BinDirEnv + " to that directory")

// Options configure a Server.
type Options struct {
	// SynchronousCommit runs the server durably, as in production: fsync
	// and full_page_writes on, so a commit waits for its WAL to reach the
	// disk. Benchmarks that compare PostgreSQL with streamsql's durable
	// checkpoints must set it, or the comparison is not fair. When false (the
	// zero value) both are off, which is what tests want: a commit still
	// writes its WAL to the kernel before it returns (synchronous_commit
	// stays on), so committed data survives a server crash or Restart, but
	// nothing waits for the disk and an OS crash can lose it.
	SynchronousCommit bool
	// Settings are extra server settings, each passed as -c name=value.
	// They override the settings above.
	Settings map[string]string
	// StartTimeout bounds how long Start waits for the server to accept
	// connections; 0 means one minute.
	StartTimeout time.Duration
}

// Server is a running PostgreSQL server owned by this process.
type Server struct {
	URL  string // postgres://postgres@127.0.0.1:PORT/postgres?sslmode=disable
	Port int
	Dir  string // the temporary directory: data/ (the cluster), the socket, postgres.log

	opts    Options
	binDir  string
	runAs   *osUser // non-nil when initdb and postgres run as another OS user
	proc    *exec.Cmd
	exited  chan struct{} // closed when proc has exited; waitErr is then set
	waitErr error
	stopped bool
}

// Start initialises a fresh cluster in a new temporary directory and starts
// postgres on a free loopback port, returning once the server accepts
// connections. The caller must call Stop, which also removes the directory.
// If PostgreSQL is not installed the error wraps ErrNotInstalled; other
// errors carry the output of initdb or the tail of the server log.
func Start(opts Options) (*Server, error) {
	binDir, err := findBinDir()
	if err != nil {
		return nil, err
	}
	runAs, err := serverUser()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "streamsql-pgtest-")
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	s := &Server{Dir: dir, opts: opts, binDir: binDir, runAs: runAs}
	if err := s.initdb(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	// A free port found by listening on :0 can be taken by someone else
	// before postgres binds it; try a few.
	for attempt := 0; ; attempt++ {
		port, err := FreePort()
		if err != nil {
			_ = os.RemoveAll(dir)
			return nil, err
		}
		err = s.start(port)
		if err == nil {
			return s, nil
		}
		_ = s.kill()
		if attempt >= 4 || !errors.Is(err, errPortInUse) {
			_ = os.RemoveAll(dir)
			return nil, err
		}
	}
}

// StartT is Start for tests and benchmarks: it fails the test with t.Fatalf
// (it never skips) if PostgreSQL is absent or does not start, and registers
// Stop with t.Cleanup.
func StartT(t testing.TB, opts Options) *Server {
	t.Helper()
	s, err := Start(opts)
	if err != nil {
		if errors.Is(err, ErrNotInstalled) {
			t.Fatalf("\n\n*** %v ***\n\n", err)
		}
		t.Fatalf("pgtest: starting PostgreSQL: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Errorf("pgtest: stopping PostgreSQL: %v", err)
		}
	})
	return s
}

// Stop shuts the server down immediately (SIGQUIT: no checkpoint, like a
// crash that loses nothing acknowledged) and removes its directory. It is
// idempotent.
func (s *Server) Stop() error {
	if s.stopped {
		return nil
	}
	s.stopped = true
	err := s.kill()
	if rmErr := os.RemoveAll(s.Dir); rmErr != nil && err == nil {
		err = fmt.Errorf("pgtest: %w", rmErr)
	}
	return err
}

// Restart shuts the server down immediately, as Stop does, and starts it
// again on the same directory and port, returning once it accepts
// connections. Committed data survives (the server recovers from its WAL);
// sessions do not.
func (s *Server) Restart() error {
	if s.stopped {
		return errors.New("pgtest: Restart of a stopped server")
	}
	if err := s.kill(); err != nil {
		return err
	}
	return s.start(s.Port)
}

// Down shuts the server down immediately, as Restart does, and leaves it
// down until Up: connections to its port are refused meanwhile.
func (s *Server) Down() error {
	if s.stopped {
		return errors.New("pgtest: Down of a stopped server")
	}
	return s.kill()
}

// Up starts a server that Down shut down again, on the same directory and
// port, returning once it accepts connections.
func (s *Server) Up() error {
	if s.stopped || s.proc != nil {
		return errors.New("pgtest: Up of a server that is not down")
	}
	return s.start(s.Port)
}

// kill stops the server process, if running, and waits for it to exit.
func (s *Server) kill() error {
	if s.proc == nil {
		return nil
	}
	defer func() { s.proc = nil }()
	select {
	case <-s.exited:
		return nil // already gone (it failed to start)
	default:
	}
	// SIGQUIT is PostgreSQL's immediate shutdown: the postmaster makes its
	// children exit and then exits itself.
	if err := quit(s.proc.Process); err != nil {
		return fmt.Errorf("pgtest: signalling postgres: %w", err)
	}
	select {
	case <-s.exited:
		return nil
	case <-time.After(30 * time.Second):
	}
	_ = s.proc.Process.Kill()
	<-s.exited
	return errors.New("pgtest: postgres did not exit within 30s of SIGQUIT; killed it")
}

// initdb creates the cluster in s.Dir/data.
func (s *Server) initdb() error {
	if s.runAs != nil {
		if err := os.Chown(s.Dir, s.runAs.uid, s.runAs.gid); err != nil {
			return fmt.Errorf("pgtest: giving %s to the postgres user: %w", s.Dir, err)
		}
	}
	cmd := s.command("initdb",
		"-D", s.dataDir(),
		"-U", "postgres",
		"-A", "trust",
		"-E", "UTF8",
		"--locale=C",
		"--no-sync",
	)
	out, err := cmd.CombinedOutput()
	if err != nil {
		hint := ""
		if s.runAs != nil {
			hint = fmt.Sprintf(" (initdb runs as the postgres user: every directory above %s must be searchable by it)", s.Dir)
		}
		return fmt.Errorf("pgtest: initdb failed: %v%s\n%s", err, hint, out)
	}
	return nil
}

var errPortInUse = errors.New("port in use")

// start starts postgres on port and waits until it accepts connections.
func (s *Server) start(port int) error {
	s.Port = port
	s.URL = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)

	logPath := filepath.Join(s.Dir, "postgres.log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	defer logFile.Close() // the child has its own copy
	logStart, _ := logFile.Seek(0, 2)

	durable := "off"
	if s.opts.SynchronousCommit {
		durable = "on"
	}
	settings := map[string]string{
		"listen_addresses":        "127.0.0.1",
		"unix_socket_directories": s.Dir,
		"synchronous_commit":      "on",
		"fsync":                   durable,
		"full_page_writes":        durable,
	}
	for k, v := range s.opts.Settings {
		settings[k] = v
	}
	names := make([]string, 0, len(settings))
	for k := range settings {
		names = append(names, k)
	}
	sort.Strings(names)
	args := []string{"-D", s.dataDir(), "-p", strconv.Itoa(port)}
	for _, k := range names {
		args = append(args, "-c", k+"="+settings[k])
	}

	cmd := s.command("postgres", args...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	setParentDeathSignal(cmd)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("pgtest: starting postgres: %w", err)
	}
	s.proc = cmd
	s.exited = make(chan struct{})
	go func(exited chan struct{}) {
		s.waitErr = cmd.Wait()
		close(exited)
	}(s.exited)

	timeout := s.opts.StartTimeout
	if timeout <= 0 {
		timeout = time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for delay := 5 * time.Millisecond; ; delay = min(2*delay, 100*time.Millisecond) {
		if err := s.ping(ctx); err == nil {
			return nil
		}
		select {
		case <-s.exited:
			log := readTail(logPath, logStart)
			err := fmt.Errorf("pgtest: postgres exited during startup (%v); log:\n%s", s.waitErr, log)
			if strings.Contains(log, "could not bind") || strings.Contains(log, "could not create any TCP/IP sockets") {
				err = fmt.Errorf("%w: %w", errPortInUse, err)
			}
			return err
		case <-ctx.Done():
			return fmt.Errorf("pgtest: postgres did not accept connections within %v; log:\n%s",
				timeout, readTail(logPath, logStart))
		case <-time.After(delay):
		}
	}
}

// ping connects once and closes the connection.
func (s *Server) ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	conn, err := pgconn.Connect(ctx, s.URL)
	if err != nil {
		return err
	}
	return conn.Close(ctx)
}

func (s *Server) dataDir() string { return filepath.Join(s.Dir, "data") }

// command returns a command running the named PostgreSQL binary as the
// server's user, with messages in English.
func (s *Server) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(s.binDir, name), args...)
	cmd.Dir = s.Dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "LANG=C")
	if s.runAs != nil {
		runAs(cmd, s.runAs)
	}
	return cmd
}

// findBinDir returns the directory holding initdb and postgres.
func findBinDir() (string, error) {
	if dir := os.Getenv(BinDirEnv); dir != "" {
		if hasServerBinaries(dir) {
			return dir, nil
		}
		return "", fmt.Errorf("%w: $%s=%s holds no initdb and postgres executables",
			ErrNotInstalled, BinDirEnv, dir)
	}
	var candidates []string
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		candidates = append(candidates, strings.TrimSpace(string(out)))
	}
	if p, err := exec.LookPath("postgres"); err == nil {
		candidates = append(candidates, filepath.Dir(p))
	}
	// Debian and Ubuntu, then Red Hat; newest major version first.
	for _, pattern := range []string{"/usr/lib/postgresql/*/bin", "/usr/pgsql-*/bin"} {
		dirs, _ := filepath.Glob(pattern)
		sort.Slice(dirs, func(i, j int) bool { return majorVersion(dirs[i]) > majorVersion(dirs[j]) })
		candidates = append(candidates, dirs...)
	}
	for _, dir := range candidates {
		if hasServerBinaries(dir) {
			return dir, nil
		}
	}
	if len(candidates) == 0 {
		return "", fmt.Errorf("%w: no pg_config or postgres on the PATH", ErrNotInstalled)
	}
	return "", fmt.Errorf("%w: looked in %s", ErrNotInstalled, strings.Join(candidates, ", "))
}

// majorVersion extracts N from .../postgresql/N/bin or /usr/pgsql-N/bin.
func majorVersion(dir string) int {
	base := filepath.Base(filepath.Dir(dir))
	base = strings.TrimPrefix(base, "pgsql-")
	n, _ := strconv.Atoi(base)
	return n
}

func hasServerBinaries(dir string) bool {
	for _, name := range []string{"initdb", "postgres"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			return false
		}
	}
	return true
}

// FreePort returns a loopback TCP port that was free a moment ago (for
// servers that tests start on a port of their own).
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgtest: finding a free port: %w", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		return 0, fmt.Errorf("pgtest: %w", err)
	}
	return port, nil
}

// readTail returns what was appended to the file at path after offset, at
// most its last 8 KiB.
func readTail(path string, offset int64) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", path, err)
	}
	if offset < int64(len(b)) {
		b = b[offset:]
	} else {
		b = nil
	}
	const max = 8 << 10
	if len(b) > max {
		b = b[len(b)-max:]
	}
	return string(b)
}
