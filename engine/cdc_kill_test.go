package engine_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streamsql/streamsql/internal/testserver"
)

// cdcHelperDirEnv names the data directory of TestCDCHelperServer, run as a
// child process by TestCDCKillNine.
const cdcHelperDirEnv = "STREAMSQL_CDC_HELPER_DIR"

// TestCDCHelperServer is not a test: run by TestCDCKillNine as a child
// process, it serves a streamsql on a data directory until it is killed.
func TestCDCHelperServer(t *testing.T) {
	dir := os.Getenv(cdcHelperDirEnv)
	if dir == "" {
		t.Skip("helper process of TestCDCKillNine")
	}
	// A checkpoint every 40 barriers (2 s): changes wait long uncommitted,
	// so an LSN confirmed before its epoch commits would be lost at a kill.
	ss := testserver.Start(t, testserver.Options{DataDir: dir, CheckpointFrequency: 40})
	fmt.Printf("URL %s\n", ss.URL)
	select {}
}

// startCDCChild starts a streamsql child process on dir and returns it
// with its URL.
func startCDCChild(t *testing.T, dir string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCDCHelperServer$")
	cmd.Env = append(os.Environ(), cdcHelperDirEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if url, ok := strings.CutPrefix(sc.Text(), "URL "); ok {
			go func() {
				for sc.Scan() {
				}
			}()
			return cmd, url
		}
	}
	t.Fatalf("the helper server did not start: %v", sc.Err())
	return nil, ""
}

// TestCDCKillNine kills a streamsql process (SIGKILL) while the upstream
// keeps writing, twice, and checks that the table and the view come back
// exactly the upstream's: nothing lost or doubled.
func TestCDCKillNine(t *testing.T) {
	up, upc := cdcUpstream(t)
	dir := t.TempDir()
	child, url := startCDCChild(t, dir)
	ssc := cdcConnect(t, url)
	cdcExec(t, ssc, fmt.Sprintf(`CREATE SOURCE pg WITH (connector = 'postgres-cdc', hostname = '127.0.0.1', port = '%d',
		username = 'postgres', database.name = 'postgres', slot.name = 'ss', publication.name = 'pub')`, up.Port),
		`CREATE TABLE t (id int PRIMARY KEY, name text, v int) FROM pg TABLE 'public.t'`,
		`CREATE MATERIALIZED VIEW mv AS `+cdcViewQuery)
	wc := cdcConnect(t, up.URL)
	for round := 0; round < 2; round++ {
		// Write upstream while streamsql is killed and comes back.
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				id := 100_000*(round+1) + i
				for _, s := range []string{
					fmt.Sprintf(`INSERT INTO t VALUES (%d, 'k%d', %d)`, id, i%5, i),
					fmt.Sprintf(`UPDATE t SET v = v + 1 WHERE id %% 9 = %d`, i%9),
					fmt.Sprintf(`DELETE FROM t WHERE id = %d`, id-3),
				} {
					if _, err := wc.Exec(context.Background(), s); err != nil {
						t.Error(err)
						return
					}
				}
				time.Sleep(2 * time.Millisecond)
			}
		}()
		time.Sleep(3500 * time.Millisecond)
		if err := child.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		_ = child.Wait()
		time.Sleep(300 * time.Millisecond)
		child, url = startCDCChild(t, dir)
		time.Sleep(500 * time.Millisecond)
		cancel()
		wg.Wait()
		ssc = cdcConnect(t, url)
		cdcAwaitSame(t, upc, ssc)
		cdcAwaitConfirmed(t, upc, ssc)
	}
	if n := cdcRows(t, upc, `SELECT count(*) FROM t`); n == "50\n" {
		t.Fatalf("the writer wrote nothing")
	}
}
