package engine

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/connector/posixfs"
	"github.com/streamsql/streamsql/connector/textdec"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/state"
)

// posixfsConnector is the connector of file sources.
const posixfsConnector = "posix_fs"

// fsReader is one view's reader of a posix_fs source. The files of the
// directory are its splits: it records, at every barrier, how far each
// file has been read (a byte offset and line for text, a row for Parquet)
// and which are done, so that after a restart it resumes in the middle of
// the file it was reading and never reads a row twice or skips one. Files
// are read one at a time, in the order of their names among those not
// read yet; the directory is listed every opts.Refresh. Reading a batch
// and injecting a barrier both hold mu, so a barrier's positions are
// exactly those of the rows sent before it.
//
// A record that does not decode is skipped, counted and logged with its
// file and line; with error.policy = 'fail' the reader stops at it and
// fails the view instead (barriers still pass). A file that cannot be read
// at all (not Parquet, a column type that does not convert) counts as one
// bad record and is marked done, or fails the view.
type fsReader struct {
	e      *Engine
	rel    *catalog.Relation
	view   uint32
	opts   *posixfs.Options
	cols   []textdec.Column
	out    chan<- exec.Message
	offset *state.Table
	fail   func(error)

	mu      sync.Mutex
	files   map[string]*fsFile // every file found, by name
	dirty   map[string]bool    // files whose position changed since the last barrier
	nextSeq int64              // the number of the next file found
	cur     posixfs.Reader     // the open reader of file curName
	curName string
	paused  bool
	failed  error
	bad     int64 // records skipped, counted into the checkpoint
	// warnedAt is when an I/O error was last logged.
	warnedAt time.Time
	// wm generates the source's watermark (WATERMARK FOR) over the rows in
	// the order they are read.
	wm     *exec.WatermarkGen
	wmSent sentWatermark

	rows atomic.Int64
	stop chan struct{}
	done chan struct{}
}

// fsFile is a file's progress.
type fsFile struct {
	seq  int64 // the file's number, in the order found (in its row ids)
	size int64 // its size when last listed
	pos  posixfs.Pos
	done bool
}

// Keys of a posix_fs reader's offset table: a file's progress is under
// fsFileKey + its name (varints seq, byte, row, then 1 if done), the count
// of bad records under kafkaBadKey, the next file number under fsSeqKey and
// the watermark under watermarkKey.
var (
	fsFileKey    = []byte("f/")
	fsFileKeyEnd = []byte("f0") // the least key after fsFileKey's
	fsSeqKey     = []byte("seq")
)

func newFSReader(e *Engine, rel, view *catalog.Relation, table *state.Table, out chan<- exec.Message, fail func(error)) (*fsReader, error) {
	opts, err := posixfs.ParseOptions(rel.Options)
	if err != nil {
		return nil, err
	}
	r := &fsReader{e: e, rel: rel, view: view.ID, opts: opts, cols: kafkaColumns(rel), out: out, offset: table, fail: fail,
		files: map[string]*fsFile{}, dirty: map[string]bool{}, paused: view.Paused,
		stop: make(chan struct{}), done: make(chan struct{})}
	if err := r.load(); err != nil {
		return nil, err
	}
	if rel.Watermark != nil {
		expr, err := sql.BindWatermark(rel)
		if err != nil {
			return nil, err
		}
		if r.wm, err = exec.NewWatermarkGen(rel.Watermark.Column, expr); err != nil {
			return nil, err
		}
		v, _, err := table.Get(watermarkKey)
		if err != nil {
			return nil, err
		}
		if err := r.wm.LoadState(v); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// load reads the committed progress of the files, the next file number and
// the count of bad records.
func (r *fsReader) load() error {
	it, err := r.offset.NewIter(fsFileKey, fsFileKeyEnd)
	if err != nil {
		return err
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		f, err := decodeFSFile(it.Value())
		if err != nil {
			return fmt.Errorf("engine: corrupt file position of a reader of source %s: %v", r.rel.Name, err)
		}
		r.files[string(it.Key()[len(fsFileKey):])] = f
	}
	if err := it.Error(); err != nil {
		return err
	}
	if r.nextSeq, err = r.counter(fsSeqKey); err != nil {
		return err
	}
	r.bad, err = r.counter(kafkaBadKey)
	return err
}

// counter reads the varint under key k (0 if none).
func (r *fsReader) counter(k []byte) (int64, error) {
	v, ok, err := r.offset.Get(k)
	if err != nil || !ok {
		return 0, err
	}
	n, m := binary.Varint(v)
	if m <= 0 {
		return 0, fmt.Errorf("engine: corrupt %s of a reader of source %s", k, r.rel.Name)
	}
	return n, nil
}

func (f *fsFile) encode() []byte {
	v := binary.AppendVarint(nil, f.seq)
	v = binary.AppendVarint(v, f.pos.Byte)
	v = binary.AppendVarint(v, f.pos.Row)
	if f.done {
		v = append(v, 1)
	}
	return v
}

func decodeFSFile(v []byte) (*fsFile, error) {
	var n [3]int64
	for i := range n {
		x, k := binary.Varint(v)
		if k <= 0 {
			return nil, fmt.Errorf("truncated")
		}
		n[i], v = x, v[k:]
	}
	return &fsFile{seq: n[0], pos: posixfs.Pos{Byte: n[1], Row: n[2]}, done: len(v) == 1 && v[0] == 1}, nil
}

// Inject records the files' progress for the epoch and sends the barrier.
func (r *fsReader) Inject(ctx context.Context, b *barrier.Barrier) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for name := range r.dirty {
		r.offset.Put(append(append([]byte(nil), fsFileKey...), name...), r.files[name].encode())
	}
	clear(r.dirty)
	r.offset.Put(fsSeqKey, binary.AppendVarint(nil, r.nextSeq))
	r.offset.Put(kafkaBadKey, binary.AppendVarint(nil, r.bad))
	var wm *barrier.Watermark
	if r.wm != nil {
		if w, ok := r.wm.Current(); ok {
			r.offset.Put(watermarkKey, r.wm.AppendState(nil))
			wm = w
		}
	}
	if err := endEpoch(r.offset, b, wm, r.send); err != nil {
		return err
	}
	r.paused = viewPausedAfter(b, r.view, r.paused)
	return nil
}

// send delivers m unless the reader is stopping.
func (r *fsReader) send(m exec.Message) error {
	return sendUnlessStopped(r.e.ctx, r.stop, r.out, m)
}

// run lists the directory every opts.Refresh and reads the files found,
// until the reader stops.
func (r *fsReader) run() {
	defer close(r.done)
	defer r.closeFile()
	var listed time.Time
	var lastErr time.Time
	for {
		if time.Since(listed) >= r.opts.Refresh {
			listed = time.Now()
			if err := r.list(); err != nil && time.Since(lastErr) > 10*time.Second {
				r.e.log.Warn("posix_fs source: listing", "source", r.rel.Name, "root", r.opts.Root, "err", err)
				lastErr = time.Now()
			}
		}
		if !r.e.awaitStateRoom(r.stop) {
			return
		}
		read, err := r.step()
		if err != nil {
			return
		}
		if read {
			continue
		}
		wait := min(100*time.Millisecond, max(time.Until(listed.Add(r.opts.Refresh)), time.Millisecond))
		select {
		case <-time.After(wait):
		case <-r.stop:
			return
		case <-r.e.ctx.Done():
			return
		}
	}
}

// list adds the files of the directory that the reader does not know.
func (r *fsReader) list() error {
	found, err := posixfs.List(r.opts.Root, r.opts.Pattern)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, f := range found {
		if known, ok := r.files[f.Name]; ok {
			known.size = f.Size
			continue
		}
		r.files[f.Name] = &fsFile{seq: r.nextSeq, size: f.Size}
		r.nextSeq++
		r.dirty[f.Name] = true
	}
	return nil
}

// step reads and sends one batch of the file under way (opening the next
// file not done, in name order, if none is open). It returns false if
// there was nothing to read, and an error only if the reader is stopping.
func (r *fsReader) step() (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.paused || r.failed != nil {
		return false, nil
	}
	if r.cur == nil && !r.openNext() {
		return false, nil
	}
	f := r.files[r.curName]
	rec, bad, err := r.cur.Next(exec.BatchSize)
	f.pos, f.done = r.cur.Pos(), r.cur.Done()
	r.dirty[r.curName] = true
	for _, b := range bad {
		r.badRecord(r.curName, b.Line, b.Err)
	}
	if err != nil {
		r.fileError(err)
	}
	if f.done || err != nil || r.failed != nil {
		r.closeFile()
	}
	if rec == nil {
		return err == nil && r.failed == nil, nil
	}
	r.rows.Add(rec.NumRows())
	return true, r.sendBatch(exec.NewBatch(rec, nil))
}

// openNext opens the first file, by name, that is not done; false if there
// is none or it does not open. (Called with mu held.)
func (r *fsReader) openNext() bool {
	var names []string
	for name, f := range r.files {
		if !f.done {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return false
	}
	sort.Strings(names)
	name := names[0]
	f := r.files[name]
	if f.seq >= posixfs.MaxFiles {
		r.curName = name
		r.fileError(&posixfs.BadFileError{Err: fmt.Errorf("the source has read %d files, the most it can", posixfs.MaxFiles)})
		return false
	}
	rd, err := posixfs.Open(r.e.mem, r.opts, r.cols, name, f.seq, f.pos)
	if err != nil {
		r.curName = name
		r.fileError(err)
		return false
	}
	r.cur, r.curName = rd, name
	return true
}

// fileError handles an error reading file r.curName: a file that cannot be
// read at all is a bad record (skipped and done, or failing the view); a
// file that vanished is logged and done; another error (I/O) is logged and
// the file read again from its position at the next turn. (Called with mu
// held.)
func (r *fsReader) fileError(err error) {
	f := r.files[r.curName]
	switch {
	case posixfs.IsBadFile(err):
		r.badRecord(r.curName, 0, err)
		if r.failed == nil {
			f.done = true
			r.dirty[r.curName] = true
		}
	case isNotExist(err):
		r.e.log.Warn("posix_fs source: a file vanished before it was read to its end", "source", r.rel.Name,
			"file", r.curName, "rows_read", f.pos.Row)
		f.done = true
		r.dirty[r.curName] = true
	default:
		if time.Since(r.warnedAt) > 10*time.Second {
			r.e.log.Warn("posix_fs source: reading (retrying)", "source", r.rel.Name, "file", r.curName, "err", err)
			r.warnedAt = time.Now()
		}
	}
}

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// badRecord skips (and counts) or fails on a record (line 0: the whole
// file) that did not decode. (Called with mu held.)
func (r *fsReader) badRecord(file string, line int64, err error) {
	where := fmt.Sprintf("file %s line %d", file, line)
	if line == 0 {
		where = "file " + file
	}
	if r.opts.FailOnError {
		// The position stays at the record: a restart fails on it again.
		r.failed = fmt.Errorf("posix_fs source %s: %s: %v (error.policy = 'fail')", r.rel.Name, where, err)
		r.e.log.Error("posix_fs source failed", "source", r.rel.Name, "err", r.failed)
		r.fail(r.failed)
		return
	}
	r.bad++
	r.e.log.Warn("posix_fs source: skipped a bad record", "source", r.rel.Name, "file", file, "line", line, "err", err)
}

// closeFile closes the file under way. (Called with mu held, or by run as
// it ends.)
func (r *fsReader) closeFile() {
	if r.cur != nil {
		r.cur.Close()
		r.cur = nil
	}
}

// sendBatch sends a batch, and then the watermark if the batch moved it.
// (Called with mu held.)
func (r *fsReader) sendBatch(b *exec.Batch) error {
	if r.wm == nil {
		return r.send(exec.Message{Batch: b})
	}
	if err := r.wm.Observe(r.e.mem, b); err != nil {
		b.Release()
		return err
	}
	if err := r.send(exec.Message{Batch: b}); err != nil {
		return err
	}
	wm, ok := r.wm.Current()
	if !ok || !r.wmSent.advance(wm) {
		return nil
	}
	return r.send(exec.Message{Watermark: wm})
}

func (r *fsReader) close() {
	close(r.stop)
	<-r.done
}

// exhausted is false: new files may appear.
func (r *fsReader) exhausted() bool { return false }

func (r *fsReader) rowsRead() int64 { return r.rows.Load() }

func (r *fsReader) source() *catalog.Relation { return r.rel }

// progress returns the records read over every file; what is left is not
// known in rows.
func (r *fsReader) progress() (rows, left int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, f := range r.files {
		rows += f.pos.Row
	}
	return rows, -1
}

// status returns the reader's count of bad records and its failure.
func (r *fsReader) status() (int64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.bad, r.failed
}

// fsFileRow is one file's row of streamsql_source_files.
type fsFileRow struct {
	name string
	f    fsFile
}

// fileRows lists the reader's files, by name.
func (r *fsReader) fileRows() []fsFileRow {
	r.mu.Lock()
	defer r.mu.Unlock()
	rows := make([]fsFileRow, 0, len(r.files))
	for name, f := range r.files {
		rows = append(rows, fsFileRow{name: name, f: *f})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].name < rows[j].name })
	return rows
}
