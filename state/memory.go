package state

// MemoryUsage is what the store's Pebble holds in memory.
type MemoryUsage struct {
	// BlockCache is the bytes of blocks in the block cache.
	BlockCache int64
	// MemTables is the bytes of the memtables, the mutable one and those
	// waiting to be flushed.
	MemTables int64
}

// MemoryUsage reads Pebble's memory use from its metrics. It takes
// Pebble's locks briefly; call it for reporting, not per batch.
func (s *Store) MemoryUsage() MemoryUsage {
	m := s.db.Metrics()
	return MemoryUsage{BlockCache: m.BlockCache.Size, MemTables: int64(m.MemTable.Size)}
}
