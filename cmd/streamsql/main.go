// Command streamsql is the streamsql server and its tools.
//
//	streamsql [flags]              serve on 127.0.0.1:4566 with data in ./streamsql-data
//	streamsql slt [--url URL] FILES...   run sqllogictest files against a server
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/exec"
)

func main() {
	root := newRootCmd()
	root.Version = versionText()
	root.SetVersionTemplate("{{.Version}}")
	root.AddCommand(newSLTCmd(), newBenchCmd(), newRestoreCmd())
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "streamsql:", err)
		os.Exit(1)
	}
}

func newRootCmd() *cobra.Command {
	var opts serveOptions
	cmd := &cobra.Command{
		Use:   "streamsql",
		Short: "A streaming SQL database that speaks the PostgreSQL protocol",
		Long: `streamsql serves SQL over the PostgreSQL wire protocol. Tables take INSERT, UPDATE
and DELETE; CREATE MATERIALIZED VIEW keeps a query's result up to date incrementally,
with checkpoints every --barrier-interval and exactly-once recovery after a crash.

Connect with: psql -h 127.0.0.1 -p 4566 -d dev`,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.metricsAddrSet = cmd.Flags().Changed("metrics-addr")
			return serve(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.listen, "listen", "127.0.0.1:4566", "address (HOST:PORT) to serve the PostgreSQL protocol on")
	f.StringVar(&opts.dataDir, "data-dir", "./streamsql-data", "directory holding the database; :memory: keeps it in memory (lost on exit)")
	f.DurationVar(&opts.barrierInterval, "barrier-interval", defaultBarrierInterval, "time between checkpoint barriers (writes trigger one sooner)")
	f.StringVar(&opts.checkpointMode, "checkpoint-mode", "exactly_once", "default checkpoint_mode of sessions: exactly_once (align barriers) or at_least_once (never block an input; see docs/fault-tolerance.md)")
	f.DurationVar(&opts.checkpointTimeout, "checkpoint-timeout", 0, "report a checkpoint not completed within this time as timed out and inject the next barrier (0: no timeout)")
	f.IntVar(&opts.maxInFlight, "max-inflight-checkpoints", 1, "checkpoints that may be under way at once")
	f.IntVar(&opts.checkpointFreq, "checkpoint-frequency", 1, "make every n-th barrier a checkpoint (durable and visible to queries); writes and FLUSH always get one")
	f.IntVar(&opts.parallelism, "streaming-parallelism", 0, "actors the partitioned part of a view or sink runs on when sessions leave streaming_parallelism at default (0: one per core, GOMAXPROCS)")
	f.StringVar(&opts.memoryLimit, "memory-limit", "", "the server's memory budget, shared by the state cache, uncommitted state, operator caches and batch queries, and the Go runtime's soft limit (e.g. 4GB; 0: none; default half the machine's or cgroup's memory)")
	f.Int64Var(&opts.cacheSize, "cache-size", 0, "bytes of state cached in memory (Pebble block cache); larger state is read from disk (0: an eighth of --memory-limit)")
	f.IntVar(&opts.aggCacheGroups, "agg-cache-groups", exec.DefaultAggCacheGroups, "groups each streaming aggregation keeps in memory; the others stay in the state store")
	f.StringVar(&opts.maxUncommittedState, "max-uncommitted-state", "", "state written and not yet committed beyond which sources wait for a checkpoint (backpressure; e.g. 1GB; 0: no limit; default a sixteenth of --memory-limit, at most 256MB)")
	f.StringVar(&opts.queryMemoryLimit, "query-memory-limit", "", "default query_memory_limit of sessions: the most memory one query may hold (e.g. 2GB; 0: no limit; default a quarter of --memory-limit)")
	f.StringVar(&opts.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	addAuthFlags(f, &opts.auth)
	f.StringVar(&opts.flightAddr, "flight-addr", "", "address (HOST:PORT) to serve Arrow Flight SQL on (empty: off); clients authenticate with a role's user and password")
	f.StringVar(&opts.metricsAddr, "metrics-addr", "127.0.0.1:9187", "address (HOST:PORT) serving Prometheus metrics at /metrics and the dashboard at /; empty: none")
	f.DurationVar(&opts.historyRetention, "checkpoint-history-retention", engine.DefaultCheckpointHistoryRetention, "how long the checkpoint history (streamsql_checkpoints) keeps a checkpoint")
	f.DurationVar(&opts.retainHistory, "retain-history", engine.DefaultRetainHistory, "how long tables and materialized views that do not set retain_history keep their change history for SUBSCRIBE ... AS OF (e.g. 1h; 0: none)")
	return cmd
}
