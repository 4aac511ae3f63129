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

// Operator state keyed by virtual node.
//
// Every state table of a partitioned operator (an aggregation's groups and
// value sets, a join's sides and time indexes) keys its rows by virtual
// node first: a 2-byte big-endian prefix VNode(partition key encoding),
// then the operator's own key. The rows of one virtual node are a
// contiguous key range and the rows of an actor's virtual nodes (a
// contiguous VNodes range) are one too, so an actor scans and cleans only
// its own rows, and a rescale hands whole ranges to the new actors without
// rewriting a row. Operators running as one actor use the same layout
// (owning AllVNodes), so that any parallelism reads the state of any other.

// VNodePrefixLen is the length of the virtual node prefix of a vnode-keyed
// state key.
const VNodePrefixLen = 2

// VNodes is a contiguous range [Lo, Hi) of virtual nodes, those an actor
// owns.
type VNodes struct{ Lo, Hi uint16 }

// AllVNodes is every virtual node: what an operator running as one actor
// owns.
var AllVNodes = VNodes{0, VNodeCount}

// OwnedVNodes returns the virtual nodes actor i of n owns (VNodeRange).
func OwnedVNodes(i, n int) VNodes {
	lo, hi := VNodeRange(i, n)
	return VNodes{lo, hi}
}

// Contains reports whether v is in r.
func (r VNodes) Contains(v uint16) bool { return v >= r.Lo && v < r.Hi }

// Bounds returns the key range [lower, upper) holding the vnode-keyed keys
// of r's virtual nodes.
func (r VNodes) Bounds() (lower, upper []byte) {
	return AppendVNode(nil, r.Lo), AppendVNode(nil, r.Hi)
}

// AppendVNode appends virtual node v's key prefix to dst. v may be
// VNodeCount, the upper bound of the last virtual node's keys.
func AppendVNode(dst []byte, v uint16) []byte {
	return append(dst, byte(v>>8), byte(v))
}

// SetVNode writes, into key's first VNodePrefixLen bytes, the virtual node
// of the partition key encoding key[VNodePrefixLen:end]. Callers reserve
// the prefix (append VNodePrefixLen bytes), append the partition key and
// the rest of the operator's key, then call SetVNode.
func SetVNode(key []byte, end int) {
	v := VNode(key[VNodePrefixLen:end])
	key[0], key[1] = byte(v>>8), byte(v)
}

// KeyVNode returns the virtual node of a vnode-keyed key.
func KeyVNode(key []byte) uint16 { return uint16(key[0])<<8 | uint16(key[1]) }

// vnodeSpans returns, for each virtual node v of r, the span [v+lower,
// v+upper); a nil lower is the start of v's keys, a nil upper their end.
//
// Virtual node v's span ends where v+1's starts only if it runs to the end
// of v (upper nil) and v+1's from its start (lower empty): the whole of
// every virtual node of r, returned as the one span [Lo, Hi). Any other
// bounds leave, between v+upper and v+1+lower, keys of v (or of v+1) that
// are kept, so the spans stay one per virtual node.
func vnodeSpans(a *arena, r VNodes, lower, upper []byte) []span {
	if len(lower) == 0 && upper == nil {
		start, end := a.alloc(VNodePrefixLen), a.alloc(VNodePrefixLen)
		start[0], start[1] = byte(r.Lo>>8), byte(r.Lo)
		end[0], end[1] = byte(r.Hi>>8), byte(r.Hi)
		return []span{{start: start, end: end}}
	}
	spans := make([]span, 0, int(r.Hi)-int(r.Lo))
	for v := r.Lo; v < r.Hi; v++ {
		start := a.alloc(VNodePrefixLen + len(lower))
		start[0], start[1] = byte(v>>8), byte(v)
		copy(start[VNodePrefixLen:], lower)
		var end []byte
		if upper == nil {
			end = a.alloc(VNodePrefixLen)
			end[0], end[1] = byte((v+1)>>8), byte(v+1)
		} else {
			end = a.alloc(VNodePrefixLen + len(upper))
			end[0], end[1] = byte(v>>8), byte(v)
			copy(end[VNodePrefixLen:], upper)
		}
		spans = append(spans, span{start: start, end: end})
	}
	return spans
}
