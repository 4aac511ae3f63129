package main

import "testing"

func TestMemoryLimitFlag(t *testing.T) {
	for v, want := range map[string]int64{"": 0, "0": -1, "512MB": 512 << 20, "2GB": 2 << 30, "1048576": 1 << 20} {
		got, err := memoryLimitFlag(v)
		if err != nil || got != want {
			t.Errorf("--memory-limit %q: %d, %v; want %d", v, got, err, want)
		}
	}
	if _, err := memoryLimitFlag("lots"); err == nil {
		t.Error("--memory-limit lots: no error")
	}
	if f := newRootCmd().Flags().Lookup("memory-limit"); f == nil {
		t.Error("no --memory-limit flag")
	}
}
