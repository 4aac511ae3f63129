// Package fs is the file sink: CREATE SINK ... WITH (connector = 'fs',
// fs.path = 'dir') FORMAT PLAIN ENCODE PARQUET | JSON writes a sink's rows
// into files of dir, one file per checkpoint that has rows, each committed
// whole or not at all.
//
// Exactly once. The rows of an epoch are written to a temporary file as
// they come (.tmp-open-<sink>); at the epoch's barrier the file is closed,
// synced and renamed to .tmp-<epoch>-<sink>, and once the checkpoint of the
// epoch commits it is renamed to its final name, part-<epoch>-<sink>.<ext>.
// When the sink opens, a temporary file of a committed epoch is finished
// (renamed) and every other temporary file is removed: its rows were not
// checkpointed and come again from the recovered dataflow. Readers list
// only part-* files, and a rename is atomic, so they never see a partial
// file.
//
// Files hold inserted rows only (PLAIN): a view that deletes or updates
// rows is refused unless force_append_only = 'true', which drops deletes
// and writes the new version of an updated row as an insert.
package fs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/sqlerr"
)

// Committer tells when an epoch's checkpoint has committed.
type Committer interface {
	// WaitCommitted blocks until epoch is committed or ctx is done.
	WaitCommitted(ctx context.Context, epoch uint64) error
	// Committed returns the last committed epoch.
	Committed() uint64
}

// Encoding is a file format.
type Encoding string

const (
	Parquet Encoding = "parquet"
	JSON    Encoding = "json"
)

// Config is a file sink's options.
type Config struct {
	Dir             string
	Encoding        Encoding
	ForceAppendOnly bool
}

// ParseConfig reads and checks the options of sink rel.
func ParseConfig(rel *catalog.Relation) (*Config, error) {
	opts := rel.Options
	c := &Config{Dir: opts["fs.path"]}
	for k, v := range opts {
		switch k {
		case "connector", "fs.path", "format", "encode", "type":
		case "force_append_only", "encode.force_append_only":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return nil, invalid("force_append_only must be true or false, not %q", v)
			}
			c.ForceAppendOnly = b
		default:
			return nil, invalid("unknown option %q of connector fs", k)
		}
	}
	if c.Dir == "" {
		return nil, invalid("connector fs needs fs.path, the directory the files go to")
	}
	if f := strings.ToLower(opts["format"]); f != "" && f != "plain" {
		return nil, sqlerr.Unsupported("FORMAT %s for connector fs (only PLAIN)", strings.ToUpper(f))
	}
	switch e := Encoding(strings.ToLower(opts["encode"])); e {
	case Parquet, JSON:
		c.Encoding = e
	case "":
		return nil, invalid("connector fs needs FORMAT PLAIN ENCODE PARQUET or JSON")
	default:
		return nil, sqlerr.Unsupported("ENCODE %s for connector fs (PARQUET or JSON)", strings.ToUpper(string(e)))
	}
	if !rel.AppendOnly && !c.ForceAppendOnly {
		return nil, invalid("the sink cannot be append-only: its query deletes or updates rows").
			WithHint("Use force_append_only = 'true' to write inserts only, or sink an append-only query.")
	}
	return c, nil
}

func invalid(format string, args ...any) *sqlerr.Error {
	return sqlerr.New(sqlerr.InvalidParameterValue, format, args...)
}

// fileWriter writes one file's rows.
type fileWriter interface {
	// write appends rows [from, to) of b.
	write(b *exec.Batch, from, to int) error
	// close finishes the file's contents (not the *os.File).
	close() error
}

// Sink is the writer of a file sink. Write and Barrier run on the sink's
// actor goroutine; the renames of committed files run on its own.
type Sink struct {
	cfg   *Config
	name  string // the sink's id in file names
	rel   *catalog.Relation
	log   *slog.Logger
	f     *os.File
	w     fileWriter
	open  func(*os.File) (fileWriter, error)
	ready chan sealed
	stop  context.CancelFunc
	done  sync.WaitGroup
	err   chan error
}

// sealed is an epoch's file waiting for its checkpoint.
type sealed struct {
	epoch uint64
	path  string
}

// NewSink opens the file sink of rel in cfg.Dir, finishing or removing what
// an earlier run left (see the package comment), and starts the goroutine
// that publishes committed files.
func NewSink(cfg *Config, rel *catalog.Relation, commits Committer, log *slog.Logger) (*Sink, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("fs sink %s: %w", rel.Name, err)
	}
	s := &Sink{cfg: cfg, name: strconv.FormatUint(uint64(rel.ID), 10), rel: rel, log: log,
		ready: make(chan sealed, 1024), err: make(chan error, 1)}
	switch cfg.Encoding {
	case Parquet:
		s.open = func(f *os.File) (fileWriter, error) { return newParquetWriter(f, rel) }
	case JSON:
		s.open = func(f *os.File) (fileWriter, error) { return newJSONWriter(f, rel), nil }
	}
	if err := s.recover(commits.Committed()); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.stop = cancel
	s.done.Add(1)
	go s.publish(ctx, commits)
	return s, nil
}

func (s *Sink) openPath() string { return filepath.Join(s.cfg.Dir, ".tmp-open-"+s.name) }

func (s *Sink) sealedPath(epoch uint64) string {
	return filepath.Join(s.cfg.Dir, fmt.Sprintf(".tmp-%d-%s", epoch, s.name))
}

func (s *Sink) finalPath(epoch uint64) string {
	return filepath.Join(s.cfg.Dir, fmt.Sprintf("part-%020d-%s.%s", epoch, s.name, s.cfg.Encoding))
}

// recover finishes the sealed files of epochs up to committed and removes
// the other temporary files of this sink.
func (s *Sink) recover(committed uint64) error {
	entries, err := os.ReadDir(s.cfg.Dir)
	if err != nil {
		return fmt.Errorf("fs sink %s: %w", s.rel.Name, err)
	}
	for _, e := range entries {
		n := e.Name()
		rest, ok := strings.CutPrefix(n, ".tmp-")
		if !ok || !strings.HasSuffix(n, "-"+s.name) {
			continue
		}
		epoch, perr := strconv.ParseUint(strings.TrimSuffix(rest, "-"+s.name), 10, 64)
		if perr == nil && epoch <= committed {
			err = s.rename(filepath.Join(s.cfg.Dir, n), s.finalPath(epoch))
		} else {
			err = os.Remove(filepath.Join(s.cfg.Dir, n))
		}
		if err != nil {
			return fmt.Errorf("fs sink %s: recovering %s: %w", s.rel.Name, n, err)
		}
	}
	return nil
}

// Write appends b's inserted rows to the epoch's file, in runs.
func (s *Sink) Write(_ context.Context, b *exec.Batch) error {
	if err := s.failed(); err != nil {
		return err
	}
	for i := 0; i < b.Len(); {
		if !s.keep(b.Ops[i]) {
			i++
			continue
		}
		j := i + 1
		for j < b.Len() && s.keep(b.Ops[j]) {
			j++
		}
		if err := s.writeRun(b, i, j); err != nil {
			return fmt.Errorf("fs sink %s: %w", s.rel.Name, err)
		}
		i = j
	}
	return nil
}

func (s *Sink) keep(op exec.Op) bool {
	return op == exec.Insert || s.cfg.ForceAppendOnly && op == exec.UpdateInsert
}

func (s *Sink) writeRun(b *exec.Batch, from, to int) error {
	if s.w == nil {
		f, err := os.Create(s.openPath())
		if err != nil {
			return err
		}
		if s.w, err = s.open(f); err != nil {
			f.Close()
			return err
		}
		s.f = f
	}
	return s.w.write(b, from, to)
}

// Barrier seals the epoch's file, if it has rows, and hands it to the
// publishing goroutine.
func (s *Sink) Barrier(_ context.Context, b *barrier.Barrier) error {
	if err := s.failed(); err != nil {
		return err
	}
	if s.w == nil {
		return nil
	}
	err := errors.Join(s.w.close(), s.f.Sync(), s.f.Close())
	s.w, s.f = nil, nil
	if err == nil {
		err = s.rename(s.openPath(), s.sealedPath(b.Epoch))
	}
	if err != nil {
		return fmt.Errorf("fs sink %s: sealing epoch %d: %w", s.rel.Name, b.Epoch, err)
	}
	select {
	case s.ready <- sealed{b.Epoch, s.sealedPath(b.Epoch)}:
		return nil
	default:
		return fmt.Errorf("fs sink %s: %d files wait for their checkpoints", s.rel.Name, cap(s.ready))
	}
}

// publish renames each sealed file once its epoch has committed.
func (s *Sink) publish(ctx context.Context, commits Committer) {
	defer s.done.Done()
	for {
		var f sealed
		select {
		case f = <-s.ready:
		case <-ctx.Done():
			return
		}
		if err := commits.WaitCommitted(ctx, f.epoch); err != nil {
			return // closing; the next start finishes the file
		}
		if err := s.rename(f.path, s.finalPath(f.epoch)); err != nil {
			s.log.Error("fs sink: publishing a committed file failed", "file", f.path, "err", err)
			select {
			case s.err <- err:
			default:
			}
			return
		}
	}
}

// failed returns the publishing goroutine's error, which fails the sink.
func (s *Sink) failed() error {
	select {
	case err := <-s.err:
		return fmt.Errorf("fs sink %s: %w", s.rel.Name, err)
	default:
		return nil
	}
}

// rename renames from to to and syncs the directory, so that the rename
// survives a crash.
func (s *Sink) rename(from, to string) error {
	if err := os.Rename(from, to); err != nil {
		return err
	}
	d, err := os.Open(s.cfg.Dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// Close stops publishing; files of committed epochs not yet renamed are
// finished when the sink opens again.
func (s *Sink) Close() {
	s.stop()
	s.done.Wait()
	if s.w != nil {
		s.w.close()
		s.f.Close()
		s.w, s.f = nil, nil
	}
}
