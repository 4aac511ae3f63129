package fs

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

type committedAt uint64

func (c committedAt) Committed() uint64 { return uint64(c) }
func (c committedAt) WaitCommitted(ctx context.Context, epoch uint64) error {
	if epoch <= uint64(c) {
		return nil
	}
	<-ctx.Done()
	return ctx.Err()
}

// TestRecover checks what a sink does at open with the files an earlier run
// left: a sealed file of a committed epoch is published, one of a later
// epoch and an unsealed one are removed, other sinks' files are left alone.
func TestRecover(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{".tmp-5-7", ".tmp-9-7", ".tmp-open-7", ".tmp-5-8", "part-00000000000000000003-7.json"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rel := &catalog.Relation{ID: 7, Name: "s", AppendOnly: true, Columns: []catalog.Column{{Name: "a", Type: types.Int32T}},
		Options: map[string]string{"connector": "fs", "fs.path": dir, "format": "plain", "encode": "json"}}
	cfg, err := ParseConfig(rel)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSink(cfg, rel, committedAt(6), nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	entries, _ := os.ReadDir(dir)
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	sort.Strings(got)
	want := []string{".tmp-5-8", "part-00000000000000000003-7.json", "part-00000000000000000005-7.json"}
	if len(got) != len(want) {
		t.Fatalf("files %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("files %v, want %v", got, want)
		}
	}
}

// TestParseConfig checks the option errors.
func TestParseConfig(t *testing.T) {
	for _, c := range []struct {
		opts       map[string]string
		appendOnly bool
		code       string
	}{
		{map[string]string{"encode": "json"}, true, "22023"},
		{map[string]string{"fs.path": "d", "encode": "csv"}, true, "0A000"},
		{map[string]string{"fs.path": "d", "encode": "json", "bogus": "1"}, true, "22023"},
		{map[string]string{"fs.path": "d", "encode": "parquet"}, false, "22023"},
		{map[string]string{"fs.path": "d", "encode": "parquet", "force_append_only": "true"}, false, ""},
	} {
		rel := &catalog.Relation{Name: "s", AppendOnly: c.appendOnly, Options: c.opts}
		_, err := ParseConfig(rel)
		code := ""
		if err != nil {
			code = sqlerr.Wrap(err).Code
		}
		if code != c.code {
			t.Errorf("%v: got %v, want %s", c.opts, err, c.code)
		}
	}
}
