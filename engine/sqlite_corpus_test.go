package engine_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/streamsql/streamsql/internal/testserver"
	"github.com/streamsql/streamsql/slt"
)

// TestSQLiteCorpus runs SQLite's sqllogictest files select1–5
// (testdata/sqlite) each against its own fresh in-process server, in
// parallel, and requires every record to pass.
func TestSQLiteCorpus(t *testing.T) {
	files, err := filepath.Glob("../testdata/sqlite/select*.test")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 5 {
		t.Fatalf("found %d corpus files, want select1-5.test", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			srv := testserver.Start(t, testserver.Options{})
			ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
			defer cancel()
			start := time.Now()
			res, err := slt.RunFile(ctx, f, slt.Options{URL: srv.URL, Engine: slt.EngineStreamSQL})
			if err != nil {
				t.Fatal(err)
			}
			for _, fl := range res.Failures {
				t.Error(fl.String())
			}
			if res.Passed == 0 {
				t.Error("no record passed")
			}
			t.Logf("%s: %d passed, %d failed, %d skipped in %v", filepath.Base(f), res.Passed, res.Failed, res.Skipped, time.Since(start).Round(time.Millisecond))
		})
	}
}
