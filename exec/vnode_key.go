package exec

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// The virtual node of a row is state.VNode of its partition key's equality
// encoding (state.AppendEqualKey, column after column): what an exchange
// by those columns hashes to route the row (partitioner.owners), so every
// operator keys a row's state under a virtual node its own actor owns.
// Operators compute it here, never by hashing an encoding of their own:
// one that hashed, say, the AppendKey encoding of an interval ('1 day' and
// '24 hours' differ there) would file state under another actor's virtual
// node, where its own actor's scans and cleaning never look.

// partitionVNode returns the virtual node of row i's partition key, the
// columns cols (of types ts) of a batch, for operators whose own state keys
// encode the partition key otherwise (as an order key, say). buf is scratch
// space, returned for reuse.
func partitionVNode(buf []byte, ts []types.T, cols []arrow.Array, i int) (uint16, []byte) {
	buf = buf[:0]
	for j, col := range cols {
		buf = state.AppendEqualKey(buf, ts[j], col, i)
	}
	return state.VNode(buf), buf
}

// setPartitionVNode writes the virtual node of row i of rec into key's
// prefix, for a state key that is the prefix (VNodePrefixLen bytes) then
// the state.AppendKey encodings of the row's partition key, columns cols
// of rec (of types ts), and nothing else yet. It returns key, whose
// capacity may have grown.
func setPartitionVNode(key []byte, ts []types.T, rec arrow.RecordBatch, cols []int, i int) []byte {
	if !equalKeyDiffers(ts) {
		state.SetVNode(key, len(key)) // the key holds the equality encoding
		return key
	}
	n := len(key)
	for j, c := range cols {
		key = state.AppendEqualKey(key, ts[j], rec.Column(c), i)
	}
	v := state.VNode(key[n:])
	key = key[:n]
	key[0], key[1] = byte(v>>8), byte(v)
	return key
}

// equalKeyDiffers reports whether state.AppendEqualKey encodes values of
// some type of ts otherwise than state.AppendKey: intervals, by their span.
func equalKeyDiffers(ts []types.T) bool {
	for _, t := range ts {
		if t.Kind == types.Interval {
			return true
		}
	}
	return false
}
