// Package memlimit is the server's one memory budget (--memory-limit): the
// limit divided into shares among the components that hold memory for a
// long time (Pebble's block cache and memtables, the uncommitted state
// layers, operator caches, batch queries), and the accounting that the
// components which can give memory back reserve from and release to.
//
// It imports nothing of streamsql, so that state, exec and engine can all
// use it.
package memlimit

import (
	"sync"
	"sync/atomic"
)

// Budget is a memory limit and its components. Components are added once,
// at start-up; Usage and the pools are safe for concurrent use.
type Budget struct {
	limit int64

	mu         sync.Mutex
	components []component
}

// component is one named part of the budget: a Pool, or a component whose
// use is read from elsewhere (report).
type component struct {
	name   string
	share  int64
	pool   *Pool
	report func() int64
}

// New returns a budget of limit bytes (0: none; shares are then 0 too,
// meaning no bound, and pools never ask for eviction).
func New(limit int64) *Budget {
	return &Budget{limit: max(limit, 0)}
}

// Limit returns the budget's limit in bytes (0: none).
func (b *Budget) Limit() int64 { return b.limit }

// Share returns num/den of the limit, at least floor (0 if there is no
// limit).
func (b *Budget) Share(num, den, floor int64) int64 {
	if b.limit == 0 {
		return 0
	}
	return max(b.limit/den*num, floor)
}

// NewPool adds a component of share bytes that its users reserve from and
// release to, and returns it.
func (b *Budget) NewPool(name string, share int64) *Pool {
	p := &Pool{name: name, share: share}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.components = append(b.components, component{name: name, share: share, pool: p})
	return p
}

// Report adds a component of share bytes whose use in bytes used returns
// (it is called from Usage, by any goroutine).
func (b *Budget) Report(name string, share int64, used func() int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.components = append(b.components, component{name: name, share: share, report: used})
}

// Usage is one component's share of the budget and its use now.
type Usage struct {
	Component string
	Share     int64 // bytes; 0: no share of its own
	Used      int64
}

// Usage returns every component's use, in the order they were added.
func (b *Budget) Usage() []Usage {
	b.mu.Lock()
	cs := append([]component(nil), b.components...)
	b.mu.Unlock()
	out := make([]Usage, len(cs))
	for i, c := range cs {
		u := Usage{Component: c.name, Share: c.share}
		if c.pool != nil {
			u.Used = c.pool.Used()
		} else {
			u.Used = c.report()
		}
		out[i] = u
	}
	return out
}

// Pool is a component of the budget that accounts reserve from. Reserving
// never fails: a pool over its share asks its accounts to shrink (Target),
// which they do where dropping memory is safe, e.g. an operator's cache
// after a barrier. A nil *Pool is a pool without a share.
type Pool struct {
	name  string
	share int64
	used  atomic.Int64
}

// NewPool returns a pool of share bytes outside any budget (tests, and
// operators built without one).
func NewPool(name string, share int64) *Pool { return &Pool{name: name, share: share} }

// Used returns the bytes reserved from the pool now.
func (p *Pool) Used() int64 {
	if p == nil {
		return 0
	}
	return p.used.Load()
}

// Share returns the pool's share in bytes (0: unbounded).
func (p *Pool) Share() int64 {
	if p == nil {
		return 0
	}
	return p.share
}

// NewAccount returns an account of the pool, for one owner.
func (p *Pool) NewAccount() *Account { return &Account{pool: p} }

// Account is one owner's reservation from a pool (one operator's cache). It
// is used by one goroutine at a time; the pool's total is shared.
type Account struct {
	pool *Pool
	n    int64
}

// Grow reserves n more bytes (n < 0: releases -n).
func (a *Account) Grow(n int64) {
	a.n += n
	if a.pool != nil {
		a.pool.used.Add(n)
	}
}

// Used returns the bytes the account holds.
func (a *Account) Used() int64 { return a.n }

// Target returns the bytes the account should shrink to now: all it holds
// while the pool is within its share; beyond it, the account's part of the
// share in proportion to what it holds (every account shrinks by the same
// fraction, so the pool comes back to its share once each has shrunk).
func (a *Account) Target() int64 {
	p := a.pool
	if p == nil || p.share <= 0 {
		return a.n
	}
	used := p.used.Load()
	if used <= p.share || used <= 0 {
		return a.n
	}
	// a.n * share / used, without overflowing int64.
	return int64(float64(a.n) * (float64(p.share) / float64(used)))
}

// Close releases everything the account holds.
func (a *Account) Close() { a.Grow(-a.n) }
