package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/cobra"
	"github.com/streamsql/streamsql/internal/pgtest"
)

// joinQuery is a many-table join in the shape of SQLite's select5.test:
// tables t1..tN of ten rows, (a int, b int, x text) with a = 1..10, joined
// along a random tree by a_child = b_parent, listed in FROM in a random
// order, with one table pinned by a = 5. Each row of a parent meets exactly
// one row of each child, so the answer is one row, and only a join order
// that follows the tree avoids a cross product.
type joinQuery struct {
	tables int
	setup  []string
	query  string
}

func newJoinQuery(n int, rng *rand.Rand) joinQuery {
	q := joinQuery{tables: n}
	for i := 1; i <= n; i++ {
		q.setup = append(q.setup, fmt.Sprintf("CREATE TABLE t%d (a%d int, b%d int, x%d text)", i, i, i, i))
		var rows []string
		for a := 1; a <= 10; a++ {
			rows = append(rows, fmt.Sprintf("(%d, %d, 'table t%d row %d')", a, 1+rng.IntN(10), i, a))
		}
		q.setup = append(q.setup, fmt.Sprintf("INSERT INTO t%d VALUES %s", i, strings.Join(rows, ", ")))
	}
	var preds, cols, from []string
	for child := 2; child <= n; child++ {
		parent := 1 + rng.IntN(child-1)
		preds = append(preds, fmt.Sprintf("a%d = b%d", child, parent))
	}
	preds = append(preds, "a1 = 5")
	for i := 1; i <= n; i++ {
		cols = append(cols, "x"+strconv.Itoa(i))
		from = append(from, "t"+strconv.Itoa(i))
	}
	rng.Shuffle(len(preds), func(i, j int) { preds[i], preds[j] = preds[j], preds[i] })
	rng.Shuffle(len(from), func(i, j int) { from[i], from[j] = from[j], from[i] })
	q.query = fmt.Sprintf("SELECT %s FROM %s WHERE %s", strings.Join(cols, ", "), strings.Join(from, ", "), strings.Join(preds, " AND "))
	return q
}

func newBenchJoinsCmd() *cobra.Command {
	var tablesFlag string
	var runs int
	var postgres bool
	cmd := &cobra.Command{
		Use:   "joins",
		Short: "Planning and run time of 10-, 30- and 64-table joins (select5.test's shape), beside PostgreSQL",
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := context.Background()
			var sizes []int
			for _, f := range strings.Split(tablesFlag, ",") {
				n, err := strconv.Atoi(strings.TrimSpace(f))
				if err != nil || n < 2 {
					return fmt.Errorf("bad --tables %q", tablesFlag)
				}
				sizes = append(sizes, n)
			}
			s, err := startBenchServer(time.Second)
			if err != nil {
				return err
			}
			defer s.close()
			type target struct {
				name, url string
				analyze   bool
			}
			targets := []target{{"streamsql", s.url, false}}
			if postgres {
				pg, err := pgtest.Start(pgtest.Options{})
				if err != nil {
					return err
				}
				defer pg.Stop()
				targets = append(targets, target{"postgresql (ANALYZE, default planner settings)", pg.URL, true})
			}
			fmt.Printf("| tables | system | plan ms (EXPLAIN) | run ms (SELECT) | plan ratio | run ratio |\n|---|---|---|---|---|---|\n")
			for i, n := range sizes {
				q := newJoinQuery(n, rand.New(rand.NewPCG(uint64(n), 1)))
				var base [2]time.Duration
				for ti, tg := range targets {
					plan, run, err := timeJoin(ctx, tg.url, fmt.Sprintf("joins%d", i), q, runs, tg.analyze)
					if err != nil {
						return fmt.Errorf("%s, %d tables: %w", tg.name, n, err)
					}
					if ti == 0 {
						base = [2]time.Duration{plan, run}
					}
					fmt.Printf("| %d | %s | %.2f | %.2f | %.2f | %.2f |\n", n, tg.name, ms(plan), ms(run),
						ms(plan)/ms(base[0]), ms(run)/ms(base[1]))
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&tablesFlag, "tables", "10,30,64", "comma-separated numbers of tables to join")
	cmd.Flags().IntVar(&runs, "runs", 5, "measured runs of each statement (the median is reported)")
	cmd.Flags().BoolVar(&postgres, "postgres", true, "also measure a local PostgreSQL")
	return cmd
}

func ms(d time.Duration) float64 { return d.Seconds() * 1000 }

// timeJoin creates q's tables in a schema of their own on url and returns
// the median time of EXPLAIN (binding and planning) and of running the
// query, which must return its one row. analyze runs ANALYZE first
// (PostgreSQL plans these joins far worse without statistics).
func timeJoin(ctx context.Context, url, schema string, q joinQuery, runs int, analyze bool) (plan, run time.Duration, err error) {
	c, err := connect(ctx, url)
	if err != nil {
		return 0, 0, err
	}
	defer c.Close(ctx)
	setup := append([]string{"CREATE SCHEMA " + schema, "SET search_path = " + schema}, q.setup...)
	if analyze {
		setup = append(setup, "ANALYZE")
	}
	if err := execAll(ctx, c, setup...); err != nil {
		return 0, 0, err
	}
	timeOf := func(sql string, check func(pgx.Rows) error) (time.Duration, error) {
		var ds []time.Duration
		for range runs {
			start := time.Now()
			rows, err := c.Query(ctx, sql)
			if err != nil {
				return 0, err
			}
			if err := check(rows); err != nil {
				return 0, err
			}
			ds = append(ds, time.Since(start))
		}
		slices.Sort(ds)
		return percentile(ds, 0.5), nil
	}
	drain := func(rows pgx.Rows) error {
		for rows.Next() {
		}
		return rows.Err()
	}
	oneRow := func(rows pgx.Rows) error {
		n := 0
		for rows.Next() {
			n++
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if n != 1 {
			return fmt.Errorf("the join returned %d rows, want 1", n)
		}
		return nil
	}
	if plan, err = timeOf("EXPLAIN "+q.query, drain); err != nil {
		return 0, 0, err
	}
	run, err = timeOf(q.query, oneRow)
	return plan, run, err
}
