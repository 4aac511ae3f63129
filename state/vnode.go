package state

import "hash/crc32"

// VNodeCount is the number of virtual nodes a partitioned operator's state is
// spread over. A dataflow fragment running as N actors gives each actor a
// contiguous range of virtual nodes (VNodeOwner); rescaling reassigns ranges.
const VNodeCount = 256

var vnodeTable = crc32.MakeTable(crc32.Castagnoli)

// VNode returns the virtual node of a memcomparable partition key (the
// encoding of a group key, join key, ... by AppendKey). The result depends
// only on the key's bytes, so it is the same in every process and at every
// parallelism.
func VNode(key []byte) uint16 {
	return uint16(crc32.Checksum(key, vnodeTable) % VNodeCount)
}

// VNodeOwner returns which of n actors owns virtual node v: actor i owns
// the range [i*VNodeCount/n, (i+1)*VNodeCount/n) rounded up, so ranges are
// contiguous and differ in size by at most one.
func VNodeOwner(v uint16, n int) int {
	return int(v) * n / VNodeCount
}

// VNodeRange returns the virtual nodes [lo, hi) owned by actor i of n.
func VNodeRange(i, n int) (lo, hi uint16) {
	return uint16((i*VNodeCount + n - 1) / n), uint16(((i+1)*VNodeCount + n - 1) / n)
}
