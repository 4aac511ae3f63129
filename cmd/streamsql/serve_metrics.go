package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/streamsql/streamsql/engine"
)

// serveMetrics serves the engine's metrics and dashboard on addr (none if
// addr is empty), and Go's profiles under /debug/pprof/, until the returned
// func is called. If addr is the default
// (not given) and taken, say by another server on the machine, the server
// runs without them and warns.
func serveMetrics(eng *engine.Engine, addr string, given bool, log *slog.Logger) (stop func(), err error) {
	if addr == "" {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil && !given {
		log.Warn("no metrics or dashboard: the default --metrics-addr is taken; give another", "addr", addr, "err", err)
		return func() {}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("--metrics-addr: listening on %s: %w", addr, err)
	}
	srv := &http.Server{Handler: withProfiles(eng.HTTPHandler()), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics server stopped", "err", err)
		}
	}()
	log.Info("metrics and dashboard", "url", "http://"+ln.Addr().String()+"/")
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	}, nil
}

// withProfiles serves net/http/pprof's profiles (heap, CPU, goroutines, ...)
// under /debug/pprof/ and everything else with h. They are on the metrics
// address, which listens on loopback by default.
func withProfiles(h http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.Handle("/", h)
	return mux
}
