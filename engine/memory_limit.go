package engine

import (
	"os"
	"strconv"
	"strings"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/sqlerr"
)

// fallbackMemory is the memory assumed when the machine's cannot be read.
const fallbackMemory = 4 << 30

// DefaultQueryMemoryLimit is the default query_memory_limit: a quarter of
// the memory available to the process (the machine's, or its cgroup's
// limit if lower), so that a few runaway queries fail before the process
// runs out of memory.
func DefaultQueryMemoryLimit() int64 {
	return availableMemory() / 4
}

// availableMemory returns the smaller of the machine's physical memory and
// the process's cgroup memory limit.
func availableMemory() int64 {
	n := physicalMemory()
	if n <= 0 {
		n = fallbackMemory
	}
	for _, path := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		if v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && v > 0 && v < n {
			n = v
		}
	}
	return n
}

// physicalMemory reads MemTotal from /proc/meminfo (0 if unavailable).
func physicalMemory() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}

// memoryUnits are the units query_memory_limit accepts, PostgreSQL's
// memory units (powers of 1024), case-insensitive.
var memoryUnits = map[string]int64{"": 1, "b": 1, "kb": 1 << 10, "mb": 1 << 20, "gb": 1 << 30, "tb": 1 << 40}

// parseMemory parses a memory size: a number of bytes, optionally followed
// by a unit (B, kB, MB, GB, TB). 0 means no limit.
func ParseMemory(v string) (int64, error) {
	s := strings.TrimSpace(v)
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	unit, ok := memoryUnits[strings.ToLower(strings.TrimSpace(s[i:]))]
	n, err := strconv.ParseInt(s[:i], 10, 64)
	if i == 0 || !ok || err != nil || n > (1<<62)/unit {
		return 0, sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for parameter \"query_memory_limit\": \"%s\"", v).
			WithHint("Valid units for this parameter are \"B\", \"kB\", \"MB\", \"GB\", and \"TB\".")
	}
	return n * unit, nil
}

// checkMemoryLimit validates and normalises a query_memory_limit value.
func checkMemoryLimit(v string) (string, error) {
	n, err := ParseMemory(v)
	if err != nil {
		return "", err
	}
	return exec.FormatBytes(n), nil
}

// queryMemoryLimit returns the session's query_memory_limit in bytes (0:
// none).
func (s *session) queryMemoryLimit() int64 {
	n, err := ParseMemory(s.value("query_memory_limit"))
	if err != nil {
		return 0 // values are checked when set
	}
	return n
}
