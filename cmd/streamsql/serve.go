package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/pgwire"
)

const defaultBarrierInterval = time.Second

type serveOptions struct {
	listen            string
	dataDir           string
	barrierInterval   time.Duration
	checkpointMode    string
	cacheSize         int64
	checkpointTimeout time.Duration
	maxInFlight       int
	checkpointFreq    int
	parallelism       int
	aggCacheGroups    int
	queryMemoryLimit  string
	memoryLimit       string
	// maxUncommittedState is --max-uncommitted-state (a memory size).
	maxUncommittedState string
	logLevel            string
	auth                authOptions
	flightAddr          string
	metricsAddr         string
	metricsAddrSet      bool // --metrics-addr given: failing to listen on it is an error
	historyRetention    time.Duration
	retainHistory       time.Duration
}

func newLogger(level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("invalid --log-level %q", level)
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: l})), nil
}

// serve runs the server until SIGINT or SIGTERM, then shuts down cleanly:
// it stops accepting connections, closes the sessions and takes a final
// checkpoint.
func serve(ctx context.Context, opts serveOptions) error {
	log, err := newLogger(opts.logLevel)
	if err != nil {
		return err
	}
	if opts.barrierInterval <= 0 {
		return errors.New("--barrier-interval must be positive")
	}
	if opts.checkpointFreq < 1 {
		return errors.New("--checkpoint-frequency must be at least 1")
	}
	if opts.parallelism < 0 || opts.parallelism > engine.MaxParallelism {
		return fmt.Errorf("--streaming-parallelism must be between 0 (one actor per core) and %d", engine.MaxParallelism)
	}
	if opts.checkpointMode != "exactly_once" && opts.checkpointMode != "at_least_once" {
		return fmt.Errorf("--checkpoint-mode must be exactly_once or at_least_once, not %q", opts.checkpointMode)
	}
	if err := opts.auth.check(opts.listen); err != nil {
		return err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	if opts.dataDir != ":memory:" {
		if err := os.MkdirAll(opts.dataDir, 0o755); err != nil {
			return fmt.Errorf("creating data directory: %w", err)
		}
	}
	var memLimit int64 // the default
	if opts.queryMemoryLimit != "" {
		if memLimit, err = engine.ParseMemory(opts.queryMemoryLimit); err != nil {
			return fmt.Errorf("--query-memory-limit: %w", err)
		}
		if memLimit == 0 {
			memLimit = -1 // no limit
		}
	}
	var maxUncommitted int64 // the default: a share of --memory-limit
	if opts.maxUncommittedState != "" {
		if maxUncommitted, err = engine.ParseMemory(opts.maxUncommittedState); err != nil {
			return fmt.Errorf("--max-uncommitted-state: %q is not a memory size (a number of bytes, or with kB, MB, GB or TB)", opts.maxUncommittedState)
		}
		if maxUncommitted == 0 {
			maxUncommitted = -1 // no limit
		}
	}
	memoryLimit, err := memoryLimitFlag(opts.memoryLimit)
	if err != nil {
		return err
	}
	engOpts := engine.Options{
		MaxUncommittedState:    maxUncommitted,
		MemoryLimit:            memoryLimit,
		DataDir:                opts.dataDir,
		BarrierInterval:        opts.barrierInterval,
		AtLeastOnce:            opts.checkpointMode == "at_least_once",
		CacheSize:              opts.cacheSize,
		CheckpointTimeout:      opts.checkpointTimeout,
		MaxInFlightCheckpoints: opts.maxInFlight,
		CheckpointFrequency:    opts.checkpointFreq,
		StreamingParallelism:   opts.parallelism,
		AggCacheGroups:         opts.aggCacheGroups,
		QueryMemoryLimit:       memLimit,
		Logger:                 log,

		CheckpointHistoryRetention: opts.historyRetention,
		RetainHistory:              retainHistoryOption(opts.retainHistory),
	}
	opts.auth.engineOptions(&engOpts)
	eng, err := engine.Open(engOpts)
	if err != nil {
		return err
	}
	setGoMemoryLimit(eng.GoMemoryLimit())
	ln, err := net.Listen("tcp", opts.listen)
	if err != nil {
		eng.Close()
		return fmt.Errorf("listening on %s: %w", opts.listen, err)
	}
	srvOpts := pgwire.Options{Logger: log, ServerVersion: engine.ServerVersion}
	if err := opts.auth.serverOptions(eng, &srvOpts); err != nil {
		ln.Close()
		eng.Close()
		return err
	}
	srv := pgwire.NewServer(eng, srvOpts)
	stopFlight, err := startFlight(eng, opts.flightAddr, log)
	if err != nil {
		ln.Close()
		eng.Close()
		return err
	}
	stopMetrics, err := serveMetrics(eng, opts.metricsAddr, opts.metricsAddrSet, log)
	if err != nil {
		stopFlight()
		ln.Close()
		eng.Close()
		return err
	}
	defer stopMetrics()
	log.Info("streamsql ready", "listen", ln.Addr().String(), "data_dir", opts.dataDir,
		"barrier_interval", opts.barrierInterval)
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
		log.Info("shutting down")
	case err = <-serveErr:
		log.Error("server stopped", "err", err)
	case <-eng.Failed():
		// Nothing more can be made durable: stop rather than accept writes
		// that can never be acknowledged. Everything committed is safe.
		err = fmt.Errorf("stopping: %w; every committed write is safe, restart once the cause is fixed", eng.Err())
		log.Error("state store failed", "err", eng.Err(), "committed_epoch", eng.CommittedEpoch())
	}
	stopFlight()
	srv.Close()
	if cerr := eng.Close(); cerr != nil && err == nil {
		err = cerr
	}
	return err
}

// retainHistoryOption maps --retain-history to engine.Options.RetainHistory,
// where 0 means the default and none is negative.
func retainHistoryOption(d time.Duration) time.Duration {
	if d <= 0 {
		return -1
	}
	return d
}
