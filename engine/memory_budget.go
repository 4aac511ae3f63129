package engine

import "github.com/streamsql/streamsql/memlimit"

// DefaultMemoryLimit is the default --memory-limit: half the memory
// available to the process (the machine's, or its cgroup's limit if lower).
// The other half is left to the operating system's page cache, which
// Pebble's reads of state beyond the block cache go through, and to other
// processes of the machine.
func DefaultMemoryLimit() int64 {
	return availableMemory() / 2
}

// The budget's division (docs/decisions.md, "One memory budget"): of the
// limit, an eighth for Pebble's block cache (its memtables are an eighth of
// that again, see state.Open), a sixteenth (at most maxDerivedUncommitted)
// for the uncommitted state layers, which a commit holds about twice more
// while it writes them, a quarter for the operators' caches, and a quarter
// for one batch query's default query_memory_limit. The rest, about a
// quarter, is the Go runtime's: batches in flight, channels, the GC's
// headroom.
const (
	minCacheShare         = 8 << 20
	minUncommittedShare   = 16 << 20
	maxDerivedUncommitted = 256 << 20
	minOperatorCacheShare = 16 << 20
	minQueryShare         = 32 << 20
)

// divideMemory resolves opts.MemoryLimit and derives the defaults of the
// components the user did not size from it. It returns the budget; the
// engine adds its components once the store is open.
func divideMemory(opts *Options) *memlimit.Budget {
	switch {
	case opts.MemoryLimit == 0:
		opts.MemoryLimit = DefaultMemoryLimit()
	case opts.MemoryLimit < 0:
		opts.MemoryLimit = 0
	}
	b := memlimit.New(opts.MemoryLimit)
	if b.Limit() == 0 {
		return b
	}
	if opts.CacheSize <= 0 {
		opts.CacheSize = b.Share(1, 8, minCacheShare)
	}
	if opts.MaxUncommittedState == 0 {
		opts.MaxUncommittedState = min(b.Share(1, 16, minUncommittedShare), maxDerivedUncommitted)
	}
	if opts.QueryMemoryLimit == 0 {
		opts.QueryMemoryLimit = b.Share(1, 4, minQueryShare)
	}
	return b
}

// reportMemory adds the budget's components: the operator caches' pool,
// which the dataflows' operators reserve from, and the components whose
// use is read from the store.
func (e *Engine) reportMemory() {
	b := e.budget
	e.opCaches = b.NewPool("operator_caches", b.Share(1, 4, minOperatorCacheShare))
	b.Report("block_cache", e.opts.CacheSize, func() int64 { return e.store.MemoryUsage().BlockCache })
	b.Report("memtables", 0, func() int64 { return e.store.MemoryUsage().MemTables })
	b.Report("uncommitted_state", e.opts.MaxUncommittedState, e.store.UncommittedBytes)
	b.Report("query_default", e.opts.QueryMemoryLimit, func() int64 { return 0 })
}

// MemoryLimit returns the memory budget in bytes (0: none).
func (e *Engine) MemoryLimit() int64 { return e.budget.Limit() }

// MemoryUsage returns each component of the memory budget with its share
// and its use now (streamsql_memory_bytes).
func (e *Engine) MemoryUsage() []memlimit.Usage { return e.budget.Usage() }

// GoMemoryLimit returns the soft memory limit for the Go runtime: the
// budget less Pebble's block cache, whose blocks (and the memtables it is
// charged for) Pebble allocates outside the Go heap (0: no budget).
func (e *Engine) GoMemoryLimit() int64 {
	if e.budget.Limit() == 0 {
		return 0
	}
	return max(e.budget.Limit()-e.opts.CacheSize, e.budget.Limit()/2)
}
