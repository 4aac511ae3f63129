package state

// DiskUsage estimates the bytes on disk of table id's committed state
// (Pebble's EstimateDiskUsage over its key range; state still in the
// memtable is not counted).
func (s *Store) DiskUsage(id TableID) (uint64, error) {
	prefix := tableKeyPrefix(id)
	n, err := s.db.EstimateDiskUsage(prefix, PrefixEnd(prefix))
	if err != nil {
		return 0, ioError("estimate", err)
	}
	return n, nil
}
