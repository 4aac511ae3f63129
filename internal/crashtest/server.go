package crashtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/streamsql/streamsql/internal/pgtest"
)

// ModuleRoot returns the nearest directory at or above dir that holds a
// go.mod file.
func ModuleRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := dir; ; {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("crashtest: no go.mod at or above %s", dir)
		}
		d = parent
	}
}

// BuildServer builds ./cmd/streamsql of the module at moduleRoot into the
// executable out, with the race detector if race is set.
func BuildServer(ctx context.Context, moduleRoot, out string, race bool) error {
	args := []string{"build", "-o", out}
	if race {
		args = append(args, "-race")
	}
	args = append(args, "./cmd/streamsql")
	cmd := exec.CommandContext(ctx, goTool(), args...)
	cmd.Dir = moduleRoot
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("crashtest: go %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	return nil
}

// goTool returns the go command of the toolchain running the tests when it
// can be found, else "go" from the PATH.
func goTool() string {
	if root := os.Getenv("GOROOT"); root != "" {
		if p := filepath.Join(root, "bin", "go"); fileExists(p) {
			return p
		}
	}
	return "go"
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// Options configure a server process.
type Options struct {
	// Binary is the streamsql executable.
	Binary string
	// DataDir is passed as --data-dir.
	DataDir string
	// BarrierInterval is passed as --barrier-interval when positive.
	BarrierInterval time.Duration
	// LogPath is the file the server's stdout and stderr are appended to.
	LogPath string
	// Args are extra command-line arguments.
	Args []string
}

// Server is a streamsql server process started by this process. Its methods
// are not safe for concurrent use, except Exited, Running and Kill, which
// may be called from any goroutine (Kill only once at a time).
type Server struct {
	// Addr is the HOST:PORT the server listens on; URL a connection string
	// for it.
	Addr string
	URL  string

	opts     Options
	cmd      *exec.Cmd
	exited   chan struct{} // closed once the process has exited; state is then set
	state    *os.ProcessState
	waitErr  error
	logStart int64
}

// errPortInUse marks a start that failed because the port was taken.
var errPortInUse = errors.New("crashtest: port in use")

// Start launches a server on a free loopback port and waits until it accepts
// connections, the process exits or ctx is done. A port taken between
// choosing and binding it is retried with another.
func Start(ctx context.Context, opts Options) (*Server, error) {
	for attempt := 0; ; attempt++ {
		s, err := Launch(opts)
		if err != nil {
			return nil, err
		}
		err = s.WaitReady(ctx)
		if err == nil {
			return s, nil
		}
		_ = s.Kill()
		if attempt >= 4 || !errors.Is(err, errPortInUse) {
			return nil, err
		}
	}
}

// Launch starts the server process on a free loopback port and returns at
// once, before the server accepts connections.
func Launch(opts Options) (*Server, error) {
	port, err := pgtest.FreePort()
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	// No metrics listener: servers of parallel tests would compete for
	// the default address.
	args := []string{"--listen", addr, "--data-dir", opts.DataDir, "--metrics-addr="}
	if opts.BarrierInterval > 0 {
		args = append(args, "--barrier-interval", opts.BarrierInterval.String())
	}
	args = append(args, opts.Args...)
	log, err := os.OpenFile(opts.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("crashtest: %w", err)
	}
	defer log.Close() // the child holds its own descriptor
	logStart, _ := log.Seek(0, 2)
	fmt.Fprintf(log, "=== crashtest: %s %s\n", opts.Binary, strings.Join(args, " "))

	cmd := exec.Command(opts.Binary, args...)
	cmd.Stdout = log
	cmd.Stderr = log
	setParentDeathSignal(cmd)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("crashtest: starting %s: %w", opts.Binary, err)
	}
	s := &Server{
		Addr:     addr,
		URL:      fmt.Sprintf("postgres://crashtest@%s/dev?sslmode=disable", addr),
		opts:     opts,
		cmd:      cmd,
		exited:   make(chan struct{}),
		logStart: logStart,
	}
	go func() {
		s.waitErr = cmd.Wait()
		s.state = cmd.ProcessState
		close(s.exited)
	}()
	return s, nil
}

// WaitReady polls the server until a connection succeeds. It fails if the
// process exits first (with errPortInUse wrapped when the port was taken)
// or ctx is done.
func (s *Server) WaitReady(ctx context.Context) error {
	for delay := 2 * time.Millisecond; ; delay = min(2*delay, 50*time.Millisecond) {
		if err := s.ping(ctx); err == nil {
			return nil
		}
		select {
		case <-s.exited:
			log := s.LogTail(4096)
			err := fmt.Errorf("crashtest: server exited during startup (%v); log:\n%s", s.waitErr, log)
			if strings.Contains(log, "address already in use") {
				err = fmt.Errorf("%w: %w", errPortInUse, err)
			}
			return err
		case <-ctx.Done():
			return fmt.Errorf("crashtest: server did not accept connections: %w; log:\n%s", ctx.Err(), s.LogTail(4096))
		case <-time.After(delay):
		}
	}
}

func (s *Server) ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	c, err := pgconn.Connect(ctx, s.URL)
	if err != nil {
		return err
	}
	return c.Close(ctx)
}

// Exited is closed once the process has exited.
func (s *Server) Exited() <-chan struct{} { return s.exited }

// Running reports whether the process has not exited yet.
func (s *Server) Running() bool {
	select {
	case <-s.exited:
		return false
	default:
		return true
	}
}

// Kill sends SIGKILL and waits for the process to exit. Killing an exited
// server does nothing.
func (s *Server) Kill() error {
	if !s.Running() {
		return nil
	}
	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("crashtest: killing server: %w", err)
	}
	<-s.exited
	return nil
}

// Signal sends sig to the process, if it is still running.
func (s *Server) Signal(sig os.Signal) error {
	if err := s.cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("crashtest: signalling server: %w", err)
	}
	return nil
}

// Terminate sends SIGTERM and waits for the process to exit or ctx to be
// done; it returns the exit state. If ctx ends first the process is killed
// and an error returned.
func (s *Server) Terminate(ctx context.Context) (*os.ProcessState, error) {
	if err := s.Signal(syscall.SIGTERM); err != nil {
		return nil, err
	}
	return s.Wait(ctx)
}

// Wait waits for the process to exit or ctx to be done and returns its exit
// state. If ctx ends first the process is killed and an error returned.
func (s *Server) Wait(ctx context.Context) (*os.ProcessState, error) {
	select {
	case <-s.exited:
		return s.state, nil
	case <-ctx.Done():
		_ = s.Kill()
		return s.state, fmt.Errorf("crashtest: server did not exit: %w", ctx.Err())
	}
}

// Log returns what this process wrote to its log.
func (s *Server) Log() string {
	b, err := os.ReadFile(s.opts.LogPath)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", s.opts.LogPath, err)
	}
	if s.logStart >= int64(len(b)) {
		return ""
	}
	return string(b[s.logStart:])
}

// LogTail returns the last n bytes this process wrote to its log.
func (s *Server) LogTail(n int) string {
	l := s.Log()
	if len(l) > n {
		l = "..." + l[len(l)-n:]
	}
	return l
}

// LogProblems returns the lines of the process's log that report a
// problem: errors, panics and data races (with -race builds), in order.
func (s *Server) LogProblems() []string {
	var out []string
	lines := strings.Split(s.Log(), "\n")
	for i, l := range lines {
		switch {
		case strings.Contains(l, "level=ERROR"):
			out = append(out, l)
		case strings.HasPrefix(l, "WARNING: DATA RACE"), strings.HasPrefix(l, "panic:"), strings.HasPrefix(l, "fatal error:"):
			// The report follows; keep a few lines of it.
			out = append(out, strings.Join(lines[i:min(i+12, len(lines))], "\n"))
		}
	}
	return out
}
