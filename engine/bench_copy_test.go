package engine_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/streamsql/streamsql/internal/testserver"
)

// BenchmarkCopy loads STREAMSQL_BENCH_ROWS rows (default 1,000,000) into a
// table without views, t (id bigint, k int, v bigint, s text), each way a
// client bulk-loads: COPY FROM STDIN in text and CSV, pgx CopyFrom (binary
// COPY), and INSERT ... SELECT from generate_series as the server-side
// reference. Each iteration loads a fresh table; the statement returns once
// its rows are committed. Reported: rows/s.
func BenchmarkCopy(b *testing.B) {
	rows := 1_000_000
	if s := os.Getenv("STREAMSQL_BENCH_ROWS"); s != "" {
		rows, _ = strconv.Atoi(s)
	}
	ctx := context.Background()
	srv := testserver.Start(b, testserver.Options{})
	conn, err := srv.Conn(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	var text, csv bytes.Buffer
	for i := 1; i <= rows; i++ {
		fmt.Fprintf(&text, "%d\t%d\t%d\trow %d\n", i, i%1000, i*7, i)
		fmt.Fprintf(&csv, "%d,%d,%d,row %d\n", i, i%1000, i*7, i)
	}
	n := 0
	table := func() string {
		n++
		name := fmt.Sprintf("t%d", n)
		if _, err := conn.Exec(ctx, "CREATE TABLE "+name+" (id bigint, k int, v bigint, s text)"); err != nil {
			b.Fatal(err)
		}
		return name
	}
	loads := []struct {
		name string
		load func(t string) (int64, error)
	}{
		{"copy-text", func(t string) (int64, error) {
			tag, err := conn.PgConn().CopyFrom(ctx, bytes.NewReader(text.Bytes()), "COPY "+t+" FROM STDIN")
			return tag.RowsAffected(), err
		}},
		{"copy-csv", func(t string) (int64, error) {
			tag, err := conn.PgConn().CopyFrom(ctx, bytes.NewReader(csv.Bytes()), "COPY "+t+" FROM STDIN (FORMAT csv)")
			return tag.RowsAffected(), err
		}},
		{"copy-binary", func(t string) (int64, error) {
			i := 0
			src := pgx.CopyFromFunc(func() ([]any, error) {
				if i == rows {
					return nil, nil
				}
				i++
				return []any{int64(i), int32(i % 1000), int64(i * 7), "row " + strconv.Itoa(i)}, nil
			})
			return conn.CopyFrom(ctx, pgx.Identifier{t}, []string{"id", "k", "v", "s"}, src)
		}},
		{"insert-select", func(t string) (int64, error) {
			tag, err := conn.Exec(ctx, fmt.Sprintf("INSERT INTO %s SELECT g, g %% 1000, g * 7, 'row ' || g FROM generate_series(1, %d) AS g", t, rows))
			return tag.RowsAffected(), err
		}},
	}
	for _, l := range loads {
		b.Run(l.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				t := table()
				b.StartTimer()
				got, err := l.load(t)
				if err != nil {
					b.Fatal(err)
				}
				if got != int64(rows) {
					b.Fatalf("%d rows loaded, want %d", got, rows)
				}
			}
			b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
