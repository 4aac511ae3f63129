// Package crashtest runs the streamsql binary as a child process, kills it
// with SIGKILL at random moments under a concurrent write workload, restarts
// it on the same data directory and checks that nothing acknowledged was lost
// and that every materialized view still equals its defining query.
//
// The package's own code (server.go) builds the binary and manages server
// processes; the tests hold the workload, the client-side model and the
// checks. The crash tests share the harness of a seed (harness_test.go:
// the server of the moment, its starts and kills), its cycles
// (cycle_test.go: the kill plan drawn from the seed, the goroutines that
// run against the server, the DDL statement in flight, the kill) and what
// their clients do alike (workload_test.go's writer: sending units,
// resolving the statements in flight at a kill):
//
//   - TestCrashRecovery: per seed, a table with a primary key (acct) and one
//     without (events), grouped, filtered, DISTINCT and view-over-view
//     materialized views, join views (inner and left outer joins of the two
//     tables, an IN subquery, a view joined with a table; NOT IN and a full
//     outer join among the views created and dropped during the run), and
//     several concurrent clients that insert, update and delete rows they own.
//     Each cycle ends the server with SIGKILL (after a random delay, right
//     after a random number of acknowledgements, during a CREATE or DROP
//     MATERIALIZED VIEW, while idle, or during a SIGTERM shutdown), sometimes
//     kills the next start during recovery, restarts it and verifies it: each
//     client's rows equal its acknowledged writes plus some prefix of the
//     statements in flight at the kill, and every view equals both its defining
//     query run as a batch SELECT and the model's computation of it. While
//     writing, clients also check read-your-writes on their rows and their
//     slice of the views, and every command tag.
//   - TestSourceCrashRecovery: per seed, a datagen source (id a sequence
//     from 1, k and v random; paced at 500 to 2000 rows per second with a
//     total sized to the run, or sometimes unpaced) feeding aggregate views
//     (count, sum, min and max of id; the same per k; a view over the per-k
//     view), a LEFT JOIN of the source with a dimension table grouped by k
//     and a filtered row-level inner join with it, while two clients insert,
//     update (primary keys too) and delete the dimension rows they own and
//     views over the source are created, paused, resumed and dropped (a
//     paused view's P must stand still). Each server start
//     draws --max-inflight-checkpoints and --checkpoint-frequency too. The
//     kill modes are those of TestCrashRecovery plus a kill a few
//     milliseconds after a write was sent, while the checkpoint it
//     triggered runs. Every view runs its own reader of the source, so each
//     view is checked on its own against the test's run of the generator
//     (connector/datagen): its rows must equal its query over the first P
//     generated rows for some P (no row twice, none skipped) and, after a
//     restart, over the dimension table as resolved from the clients'
//     histories; P must never go below a value a read has already shown.
//     A monitor reads the views while the clients write; the clients check
//     read-your-writes on their rows and their keys of the join view. At the
//     end, with the clients stopped, every view must reach P = the source's
//     total and keep it through a few checkpoints, a SIGKILL and a clean
//     shutdown. By default it runs one seed, with three more cycles than
//     -cycles; the source's size depends on -cycles.
//   - TestEventTimeCrashRecovery: per seed, two tables with WATERMARK FOR ts
//     AS ts - INTERVAL '10 seconds', et_a APPEND ONLY and et_b with a
//     primary key, under a TUMBLE and a HOP aggregation, an EMIT ON WINDOW
//     CLOSE TUMBLE aggregation over each table, a group TopN (rn <= 3), a
//     DISTINCT ON, an interval join of the two tables, a SESSION
//     aggregation, a running sum OVER a window and a plain aggregation; views
//     that do not depend on lateness are created and dropped during the run.
//     Clients insert into both tables with event time moving forward, one
//     row in six late, and update (v, or ts to a new in-time one, also of a
//     late row) and delete et_b rows, late or in time. The clients make only
//     changes whose fate is certain (etClock): in time when no watermark they
//     can meet is above their ts, late when the watermark of the committed
//     rows is above it and already closes every window holding it; some times
//     are chosen at those edges, within a millisecond of the bounds. The
//     model keeps, besides the tables, the
//     effective rows (inserted in time, not deleted in time). The kill modes
//     and server arguments are those of TestSourceCrashRecovery. After every
//     restart each client's rows must equal its acknowledged writes plus a
//     prefix of its statements in flight; every view must equal PostgreSQL
//     running its query over the committed tables (views that do not depend
//     on lateness, which must also equal their batch SELECT) or over the
//     effective rows (the windowed aggregations, the interval join, the
//     sessions); an EMIT ON WINDOW CLOSE view must hold exactly the windows
//     ending at or before the committed watermark (the largest ts committed
//     minus the delay), so the watermark is recovered and late rows stay
//     dropped after a restart. A monitor reads the EMIT ON WINDOW CLOSE views
//     while the clients write: no window twice, and no row that any read has
//     shown may change or go away, across kills too. It ends with a clean
//     shutdown, a restart and a last check. By default it runs one seed.
//   - TestKafkaSinkCrashRecovery: exactly-once Kafka sinks (two FORMAT
//     DEBEZIUM, a grouped and a filtered one, and a FORMAT UPSERT) to an
//     in-process kfake broker, while a client inserts, updates and deletes;
//     SIGKILLs at random moments, one start in three killed during startup.
//     At the end a read_committed consumer folds each Debezium topic
//     strictly (a change seen twice, or one of a row never created, fails)
//     and the upsert topic by key, and each must equal its query.
//   - TestCleanShutdown: SIGTERM under load and when idle exits with status 0
//     and loses nothing.
//   - TestDataDirInUse: a second server on a data directory in use is refused.
//
// Flags (after the package path): -seed N runs one seed, -seeds and -cycles
// size the run (TestSourceCrashRecovery and TestEventTimeCrashRecovery run
// one seed unless -seeds is given), -clients the concurrency, -binary tests a given executable,
// -server-race builds the server with the race detector, -keep keeps data
// directories and logs (a failing seed always keeps them), -strict-errors
// turns on a check that is off while its bug is open. For example:
//
//	go test ./internal/crashtest -run TestCrashRecovery -seed=42 -cycles=20 -v
//
// A failing run prints its seed; the same seed makes the same choices
// (statements, barrier intervals, kill modes and delays), although the exact
// moment of a kill relative to the server's work still depends on timing.
package crashtest
