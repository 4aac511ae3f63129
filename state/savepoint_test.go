package state

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/streamsql/streamsql/sqlerr"
)

// TestSavepointRoundTrip writes a savepoint, keeps committing, restores the
// savepoint into a new directory and checks that it holds exactly the
// savepoint's epoch.
func TestSavepointRoundTrip(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(filepath.Join(dir, "data"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	tbl := s.Table(1)
	tbl.Put([]byte("a"), []byte("1"))
	tbl.Seal(1)
	if _, err := s.Commit(1); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(dir, "data", "savepoints")
	info, err := s.CreateSavepoint(root, "before")
	if err != nil {
		t.Fatal(err)
	}
	if info.Epoch != 1 || info.FormatVersion != FormatVersion {
		t.Fatalf("savepoint info %+v", info)
	}
	if _, err := s.CreateSavepoint(root, "before"); sqlerr.Code(err) != sqlerr.DuplicateObject {
		t.Fatalf("second savepoint with the same name: %v", err)
	}
	if _, err := s.CreateSavepoint(root, "../escape"); sqlerr.Code(err) != sqlerr.InvalidParameterValue {
		t.Fatalf("bad name: %v", err)
	}
	tbl.Put([]byte("a"), []byte("2"))
	tbl.Put([]byte("b"), []byte("3"))
	tbl.Seal(2)
	if _, err := s.Commit(2); err != nil {
		t.Fatal(err)
	}
	// A leftover of an unfinished savepoint is not listed (and is removed).
	if err := os.MkdirAll(filepath.Join(root, tempPrefix+"half-123"), 0o755); err != nil {
		t.Fatal(err)
	}
	list, err := ListSavepoints(root)
	if err != nil || len(list) != 1 || list[0].Name != "before" || list[0].Size == 0 {
		t.Fatalf("list = %+v, %v", list, err)
	}
	if _, err := os.Stat(filepath.Join(root, tempPrefix+"half-123")); !os.IsNotExist(err) {
		t.Fatalf("leftover not removed: %v", err)
	}
	s.Close()

	restored := filepath.Join(dir, "restored")
	if _, err := RestoreSavepoint(filepath.Join(root, "before"), restored); err != nil {
		t.Fatal(err)
	}
	r, err := Open(restored, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.CommittedEpoch() != 1 {
		t.Fatalf("restored epoch %d", r.CommittedEpoch())
	}
	v, ok, err := r.Table(1).Get([]byte("a"))
	if err != nil || !ok || string(v) != "1" {
		t.Fatalf("a = %q %v %v", v, ok, err)
	}
	if _, ok, _ := r.Table(1).Get([]byte("b")); ok {
		t.Fatal("b is from after the savepoint")
	}
	// Restoring into a non-empty directory is refused.
	if _, err := RestoreSavepoint(filepath.Join(root, "before"), restored); sqlerr.Code(err) != sqlerr.ObjectInUse {
		t.Fatalf("restore into a used directory: %v", err)
	}
	if err := DropSavepoint(root, "before"); err != nil {
		t.Fatal(err)
	}
	if list, _ := ListSavepoints(root); len(list) != 0 {
		t.Fatalf("after drop: %+v", list)
	}
}

// TestSavepointFormatVersion checks that a savepoint of another format
// version is refused.
func TestSavepointFormatVersion(t *testing.T) {
	dir := t.TempDir()
	sp := filepath.Join(dir, "sp")
	if err := os.MkdirAll(filepath.Join(sp, savepointDB), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sp, savepointMarker), []byte(`{"name":"sp","epoch":3,"format_version":99}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := RestoreSavepoint(sp, filepath.Join(dir, "new"))
	if sqlerr.Code(err) != sqlerr.FeatureNotSupported {
		t.Fatalf("got %v", err)
	}
}

// TestSavepointInMemory checks that an in-memory store refuses savepoints.
func TestSavepointInMemory(t *testing.T) {
	s, err := Open(MemoryDir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.CreateSavepoint(t.TempDir(), "x"); sqlerr.Code(err) != sqlerr.FeatureNotSupported {
		t.Fatalf("got %v", err)
	}
}
