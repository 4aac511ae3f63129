package state

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/streamsql/streamsql/sqlerr"
)

// A savepoint is a durable, self-contained copy of a committed checkpoint in
// its own directory: db/ holds the Pebble database as of one committed epoch
// (catalog, every table's and view's state, every source position), and
// SAVEPOINT, written last, describes it. A savepoint is published by renaming
// a finished temporary directory, so a crash never leaves a half savepoint
// that could be restored; leftover temporary directories are removed the
// next time savepoints are listed.

// SavepointInfo describes a savepoint.
type SavepointInfo struct {
	Name          string    `json:"name"`
	Epoch         uint64    `json:"epoch"`
	Created       time.Time `json:"created"`
	FormatVersion int       `json:"format_version"`
	// Size is the size of the savepoint's files, in bytes (not stored).
	Size int64 `json:"-"`
	// Path is the savepoint's directory (not stored).
	Path string `json:"-"`
}

const (
	savepointMarker = "SAVEPOINT"
	savepointDB     = "db"
	tempPrefix      = ".tmp-"
)

var savepointName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$`)

func checkSavepointName(name string) error {
	if !savepointName.MatchString(name) {
		return sqlerr.New(sqlerr.InvalidParameterValue, "invalid savepoint name %q: use up to 64 letters, digits, '_', '.' or '-'", name)
	}
	return nil
}

// CreateSavepoint writes a savepoint of the last committed epoch into
// root/name. Commits wait while the copy is made (Pebble hard-links the
// immutable files, so this is quick). The store must be on disk.
func (s *Store) CreateSavepoint(root, name string) (SavepointInfo, error) {
	if err := checkSavepointName(name); err != nil {
		return SavepointInfo{}, err
	}
	if !s.onDisk {
		return SavepointInfo{}, sqlerr.Unsupported("savepoints of an in-memory database (--data-dir :memory:)")
	}
	final := filepath.Join(root, name)
	if _, err := os.Stat(final); err == nil {
		return SavepointInfo{}, sqlerr.New(sqlerr.DuplicateObject, "savepoint %q already exists", name)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return SavepointInfo{}, ioError("create savepoint directory", err)
	}
	tmp, err := os.MkdirTemp(root, tempPrefix+name+"-")
	if err != nil {
		return SavepointInfo{}, ioError("create savepoint directory", err)
	}
	defer os.RemoveAll(tmp) // a no-op once renamed

	s.commitMu.Lock()
	info := SavepointInfo{Name: name, Epoch: s.CommittedEpoch(), Created: time.Now().UTC(), FormatVersion: FormatVersion}
	err = s.db.Checkpoint(filepath.Join(tmp, savepointDB), pebble.WithFlushedWAL())
	s.commitMu.Unlock()
	if err != nil {
		return SavepointInfo{}, ioError("copy the database for a savepoint", err)
	}
	meta, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return SavepointInfo{}, err
	}
	if err := writeFileSync(filepath.Join(tmp, savepointMarker), meta); err != nil {
		return SavepointInfo{}, ioError("write savepoint marker", err)
	}
	if err := syncDir(tmp); err != nil {
		return SavepointInfo{}, ioError("sync savepoint", err)
	}
	if err := os.Rename(tmp, final); err != nil {
		return SavepointInfo{}, ioError("publish savepoint", err)
	}
	if err := syncDir(root); err != nil {
		return SavepointInfo{}, ioError("sync savepoint directory", err)
	}
	info.Path = final
	info.Size, _ = dirSize(final)
	return info, nil
}

// ReadSavepoint reads the description of the savepoint in dir.
func ReadSavepoint(dir string) (SavepointInfo, error) {
	data, err := os.ReadFile(filepath.Join(dir, savepointMarker))
	if err != nil {
		return SavepointInfo{}, sqlerr.New(sqlerr.UndefinedObject, "%s is not a streamsql savepoint (no %s file): %v", dir, savepointMarker, err)
	}
	var info SavepointInfo
	if err := json.Unmarshal(data, &info); err != nil {
		return SavepointInfo{}, sqlerr.New(sqlerr.DataException, "savepoint %s has a corrupt %s file: %v", dir, savepointMarker, err)
	}
	info.Path = dir
	info.Size, _ = dirSize(dir)
	return info, nil
}

// ListSavepoints lists the savepoints in root, by name, removing leftovers
// of savepoints whose creation did not finish.
func ListSavepoints(root string) ([]SavepointInfo, error) {
	entries, err := os.ReadDir(root)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, ioError("list savepoints", err)
	}
	var out []SavepointInfo
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		path := filepath.Join(root, e.Name())
		if strings.HasPrefix(e.Name(), tempPrefix) {
			os.RemoveAll(path)
			continue
		}
		info, err := ReadSavepoint(path)
		if err != nil {
			continue
		}
		out = append(out, info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// DropSavepoint removes savepoint name from root.
func DropSavepoint(root, name string) error {
	if err := checkSavepointName(name); err != nil {
		return err
	}
	path := filepath.Join(root, name)
	if _, err := ReadSavepoint(path); err != nil {
		return sqlerr.New(sqlerr.UndefinedObject, "savepoint %q does not exist", name)
	}
	// Unpublish first (rename to a temporary name), so that a crash during
	// the removal leaves no savepoint that is only partly there.
	tmp := filepath.Join(root, tempPrefix+"drop-"+name)
	if err := os.Rename(path, tmp); err != nil {
		return ioError("drop savepoint", err)
	}
	if err := syncDir(root); err != nil {
		return ioError("drop savepoint", err)
	}
	return os.RemoveAll(tmp)
}

// RestoreSavepoint prepares dataDir, which must not exist or be empty, as a
// copy of the savepoint in from. A server started on dataDir resumes every
// view from the savepoint's state and source positions.
func RestoreSavepoint(from, dataDir string) (SavepointInfo, error) {
	info, err := ReadSavepoint(from)
	if err != nil {
		return info, err
	}
	if info.FormatVersion != FormatVersion {
		return info, sqlerr.New(sqlerr.FeatureNotSupported,
			"savepoint %s has format version %d; this streamsql reads format version %d", from, info.FormatVersion, FormatVersion)
	}
	if entries, err := os.ReadDir(dataDir); err == nil && len(entries) > 0 {
		return info, sqlerr.New(sqlerr.ObjectInUse, "data directory %s is not empty; restore into a new directory", dataDir)
	}
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return info, ioError("create data directory", err)
	}
	src := filepath.Join(from, savepointDB)
	entries, err := os.ReadDir(src)
	if err != nil {
		return info, ioError("read savepoint", err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		if err := copyFileSync(filepath.Join(src, e.Name()), filepath.Join(dataDir, e.Name())); err != nil {
			return info, ioError("copy savepoint", err)
		}
	}
	if err := syncDir(dataDir); err != nil {
		return info, ioError("sync data directory", err)
	}
	// Opening checks the store's own format version and that it is intact.
	st, err := Open(dataDir, Options{})
	if err != nil {
		return info, fmt.Errorf("the restored data directory does not open: %w", err)
	}
	if got := st.CommittedEpoch(); got != info.Epoch {
		st.Close()
		return info, fmt.Errorf("the restored data directory is at epoch %d, the savepoint says %d", got, info.Epoch)
	}
	return info, st.Close()
}

func writeFileSync(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func copyFileSync(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

func dirSize(dir string) (int64, error) {
	var n int64
	err := filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			n += fi.Size()
		}
		return nil
	})
	return n, err
}
