package exec

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// partitionVNode returns the virtual node of row i's partition key, the
// columns cols (of types ts) of a batch: the virtual node an exchange by
// those columns sends the row to (see partitioner.owners), for operators
// whose own state keys encode the partition key otherwise (as an order
// key, say). buf is scratch space, returned for reuse.
func partitionVNode(buf []byte, ts []types.T, cols []arrow.Array, i int) (uint16, []byte) {
	buf = buf[:0]
	for j, col := range cols {
		buf = state.AppendEqualKey(buf, ts[j], col, i)
	}
	return state.VNode(buf), buf
}
