package engine_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/streamsql/streamsql/internal/testserver"
	"github.com/streamsql/streamsql/slt"
)

// TestSQLLogic runs every testdata/sqllogic/**/*.slt file over the
// PostgreSQL protocol against its own in-process server, whose data is in a
// crashable in-memory filesystem. The restart directive restarts that server
// on the same data; kill crashes it first, keeping only what it had synced.
func TestSQLLogic(t *testing.T) {
	files, err := slt.Files("../testdata/sqllogic")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no .slt files found")
	}
	for _, f := range files {
		name, _ := filepath.Rel("../testdata/sqllogic", f)
		t.Run(name, func(t *testing.T) {
			srv := testserver.Start(t, testserver.Options{Crashable: true})
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			res, err := slt.RunFile(ctx, f, slt.Options{
				URL:    srv.URL,
				Engine: slt.EngineStreamSQL,
				Restart: func(ctx context.Context) (string, error) {
					if err := srv.Restart(); err != nil {
						return "", err
					}
					return srv.URL, nil
				},
				Kill: func(ctx context.Context) (string, error) {
					if err := srv.Kill(); err != nil {
						return "", err
					}
					return srv.URL, nil
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			for _, fl := range res.Failures {
				t.Error(fl.String())
			}
			t.Logf("%s: %d passed, %d failed, %d skipped", name, res.Passed, res.Failed, res.Skipped)
		})
	}
}
