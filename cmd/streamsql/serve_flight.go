package main

import (
	"fmt"
	"log/slog"
	"net"

	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/flightsrv"
)

// startFlight serves Arrow Flight SQL on addr ("" : not at all) and
// returns the function that stops it.
func startFlight(eng *engine.Engine, addr string, log *slog.Logger) (stop func(), err error) {
	if addr == "" {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listening on --flight-addr %s: %w", addr, err)
	}
	srv := flightsrv.New(eng, flightsrv.Options{Logger: log})
	go func() {
		if err := srv.Serve(ln); err != nil {
			log.Error("flight sql server stopped", "err", err)
		}
	}()
	log.Info("arrow flight sql ready", "listen", ln.Addr().String())
	return srv.Shutdown, nil
}
