package exec

import "github.com/streamsql/streamsql/memlimit"

// Operator caches and the memory budget.
//
// A HashAgg and a TopN keep groups in memory across barriers; every group's
// state is also in their state tables, so a cached group can be dropped
// after a barrier and reloaded at its next change. Each such operator has an
// account in the budget's pool of operator caches (Env.CachePool) and
// charges it an estimate of each cached group's bytes. After each barrier
// it evicts (its CLOCK sweep) until it holds at most CacheGroups groups and
// at most its account's Target: while the pool is over its share, every
// account shrinks by the same fraction.
//
// The estimates count the bytes the operator allocates per group (keys,
// cached rows, the output row last emitted) plus a fixed overhead for the
// map entry and slices; aggregate states beyond a fixed size per aggregate
// (string_agg's strings, a value set's cached entries) are not counted.

// Estimated fixed costs of a cached group, in bytes.
const (
	// groupOverhead is a map entry (its string header, value and bucket
	// share) and a group's slots in the per-group slices.
	groupOverhead = 96
	// aggSlotBytes is one aggregate's per-group state.
	aggSlotBytes = 16
	// topNRowOverhead is a cached TopN row's slice headers.
	topNRowOverhead = 56
)

// cacheCharges is an operator's account with what it charged per group
// slot. Owned by the operator's goroutine.
type cacheCharges struct {
	acct  *memlimit.Account
	slots []int64
}

func newCacheCharges(p *memlimit.Pool) cacheCharges {
	return cacheCharges{acct: p.NewAccount()}
}

// set charges slot n bytes in all, replacing what it was charged.
func (c *cacheCharges) set(slot int32, n int64) {
	for int(slot) >= len(c.slots) {
		c.slots = append(c.slots, 0)
	}
	c.acct.Grow(n - c.slots[slot])
	c.slots[slot] = n
}

// setAt charges n bytes for a group whose charge the operator keeps in
// *charged, replacing it (n = 0: releases it).
func (c *cacheCharges) setAt(charged *int64, n int64) {
	c.acct.Grow(n - *charged)
	*charged = n
}

// drop releases slot's charge.
func (c *cacheCharges) drop(slot int32) {
	if int(slot) < len(c.slots) {
		c.acct.Grow(-c.slots[slot])
		c.slots[slot] = 0
	}
}

// overBy returns a function reporting whether the operator still holds
// more than its target, fixed when called: the sweep that follows evicts
// until it returns false.
func (c *cacheCharges) overBy() func() bool {
	target := c.acct.Target()
	return func() bool { return c.acct.Used() > target }
}

// close releases everything charged.
func (c *cacheCharges) close() {
	c.acct.Close()
	c.slots = nil
}
