package main

import (
	"fmt"
	"runtime/debug"

	"github.com/streamsql/streamsql/engine"
)

// memoryLimitFlag parses --memory-limit into engine.Options.MemoryLimit:
// "" is the default (0), "0" no limit (-1).
func memoryLimitFlag(v string) (int64, error) {
	if v == "" {
		return 0, nil
	}
	n, err := engine.ParseMemory(v)
	if err != nil {
		return 0, fmt.Errorf("--memory-limit: %q is not a memory size (a number of bytes, or with kB, MB, GB or TB)", v)
	}
	if n == 0 {
		return -1, nil
	}
	return n, nil
}

// setGoMemoryLimit makes limit (the budget less what Pebble holds outside
// the Go heap, engine.GoMemoryLimit) the Go runtime's soft memory
// limit, so that the collector runs more often as the heap nears it instead
// of letting it double (GOGC) past it. A limit in the GOMEMLIMIT
// environment variable wins; no budget leaves the runtime alone.
func setGoMemoryLimit(limit int64) {
	if limit <= 0 || debug.SetMemoryLimit(-1) != 1<<63-1 {
		return // no budget, or GOMEMLIMIT is set
	}
	debug.SetMemoryLimit(limit)
}
