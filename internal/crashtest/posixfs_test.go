package crashtest

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestPosixFSSourceCrashRecovery kills the server with SIGKILL at random
// moments while files of JSON lines (some of many batches) appear in a
// directory that views read through a posix_fs source, restarts it, and
// checks at the end that the views counted every row of every file exactly
// once, as a model of all the files' rows says.
func TestPosixFSSourceCrashRecovery(t *testing.T) {
	seed := seeds()[0]
	rng := rand.New(rand.NewPCG(seed, 0))
	t.Logf("seed %d", seed)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	if err := os.Mkdir(in, 0o755); err != nil {
		t.Fatal(err)
	}
	opts := Options{Binary: binary(t), DataDir: filepath.Join(dir, "data"), LogPath: filepath.Join(dir, "server.log"),
		BarrierInterval: 20 * time.Millisecond}
	srv, err := Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Kill()
	conn, err := pgx.Connect(ctx, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		fmt.Sprintf(`CREATE SOURCE s (id bigint, k int) WITH (connector = 'posix_fs', posix_fs.root = '%s',
			match_pattern = '*.json', refresh.interval.sec = '0.1') FORMAT PLAIN ENCODE JSON`, in),
		"CREATE MATERIALIZED VIEW totals AS SELECT count(*) AS n, sum(id)::bigint AS s, count(DISTINCT id) AS d FROM s",
		"CREATE MATERIALIZED VIEW by_k AS SELECT k, count(*) AS n FROM s GROUP BY k",
	} {
		if _, err := conn.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	conn.Close(ctx)

	// The model: the files written, each of rows ids (written, written+n].
	var written, files int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		wrng := rand.New(rand.NewPCG(seed, 1))
		for files < 60 {
			select {
			case <-done:
				return
			case <-time.After(time.Duration(5+wrng.IntN(40)) * time.Millisecond):
			}
			n := int64(1 + wrng.IntN(3000))
			if wrng.IntN(5) == 0 {
				n = 20000
			}
			var buf bytes.Buffer
			for id := written + 1; id <= written+n; id++ {
				fmt.Fprintf(&buf, "{\"id\": %d, \"k\": %d}\n", id, id%7)
			}
			name := fmt.Sprintf("f-%04d.json", files)
			tmp := filepath.Join(in, "."+name)
			if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
				t.Error(err)
				return
			}
			if err := os.Rename(tmp, filepath.Join(in, name)); err != nil {
				t.Error(err)
				return
			}
			written += n
			files++
		}
	}()
	for cycle := 0; cycle < *flagCycles; cycle++ {
		time.Sleep(time.Duration(100+rng.IntN(700)) * time.Millisecond)
		if err := srv.Kill(); err != nil {
			t.Fatal(err)
		}
		if srv, err = Start(ctx, opts); err != nil {
			t.Fatalf("restart %d: %v", cycle, err)
		}
	}
	close(done)
	wg.Wait()
	n := written
	want := fmt.Sprintf("%d %d %d", n, n*(n+1)/2, n)
	conn, err = pgx.Connect(ctx, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var got string
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		var c, s, d int64
		if err := conn.QueryRow(ctx, "SELECT n, s, d FROM totals").Scan(&c, &s, &d); err != nil {
			t.Fatal(err)
		}
		if got = fmt.Sprintf("%d %d %d", c, s, d); got == want {
			break
		}
	}
	if got != want {
		t.Fatalf("after %d kills: totals (count, sum, distinct) %s, files hold %s\n%s", *flagCycles, got, want, srv.LogTail(40))
	}
	var byK, doneFiles int64
	if err := conn.QueryRow(ctx, "SELECT sum(n)::bigint FROM by_k").Scan(&byK); err != nil || byK != n {
		t.Fatalf("by_k counts %d (%v), files hold %d", byK, err, n)
	}
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM streamsql_source_files WHERE view = 'totals' AND done").Scan(&doneFiles); err != nil || doneFiles != files {
		t.Fatalf("%d files done (%v), %d written", doneFiles, err, files)
	}
	t.Logf("%d rows in %d files, %d kills: each counted once", n, files, *flagCycles)
}
