package state

// EstimateRows estimates the number of committed keys of table id. It
// counts them up to limit; a table with more is estimated as its size on
// disk (Pebble's EstimateDiskUsage over the table's key range) over the
// mean size of the entries counted. Entries still in the memtable are not
// on disk, so when that estimate is below maxCount the keys are counted on,
// up to maxCount: below maxCount the result is exact, above it at least
// maxCount. Disk sizes are compressed, so beyond maxCount the estimate is
// low rather than high. Reading costs at most maxCount steps of an
// iterator, and at most limit for a table whose size on disk shows it has
// more than maxCount keys.
func (sn *Snapshot) EstimateRows(id TableID, limit, maxCount int) (float64, error) {
	it, err := sn.NewIter(id, nil, nil)
	if err != nil {
		return 0, err
	}
	defer it.Close()
	n, bytes := 0, 0
	ok := it.First()
	for ; ok && n < limit; ok = it.Next() {
		n++
		bytes += len(it.Key()) + len(it.Value())
	}
	if !ok {
		return float64(n), it.Error()
	}
	prefix := tableKeyPrefix(id)
	disk, err := sn.store.db.EstimateDiskUsage(prefix, PrefixEnd(prefix))
	if err != nil {
		return 0, ioError("estimate", err)
	}
	est := float64(disk) / (float64(bytes) / float64(n))
	if est >= float64(maxCount) {
		return est, nil
	}
	for ; ok && n < maxCount; ok = it.Next() {
		n++
	}
	if err := it.Error(); err != nil {
		return 0, err
	}
	return max(float64(n), est), nil
}
