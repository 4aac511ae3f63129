package state

import "errors"

// EstimateRows estimates the number of committed keys of table id: it
// counts them up to limit; a table with more has at least limit, and
// about its size on disk (Pebble's EstimateDiskUsage over the table's key
// range) over the mean size of the entries counted. Entries still in the
// memtable are not on disk, and disk sizes are compressed, so beyond limit
// the estimate is low rather than high. Reading costs at most limit steps
// of an iterator.
func (sn *Snapshot) EstimateRows(id TableID, limit int) (float64, error) {
	it, err := sn.NewIter(id, nil, nil)
	if err != nil {
		return 0, err
	}
	n, bytes := 0, 0
	for ok := it.First(); ok && n < limit; ok = it.Next() {
		n++
		bytes += len(it.Key()) + len(it.Value())
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return 0, err
	}
	if n < limit {
		return float64(n), nil
	}
	prefix := tableKeyPrefix(id)
	disk, err := sn.store.db.EstimateDiskUsage(prefix, PrefixEnd(prefix))
	if err != nil {
		return 0, ioError("estimate", err)
	}
	return max(float64(n), float64(disk)/(float64(bytes)/float64(n))), nil
}
