package engine

import (
	"encoding/binary"
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/streamsql/streamsql/exec"
)

// TestCDCRowIndex writes rows of 1,000 keys, each key three times, through
// the chunk's row index, growing it from empty and again after a reset, and
// checks that each key finds its last row after each pass and that an absent key finds none.
func TestCDCRowIndex(t *testing.T) {
	var enc exec.EncodedRows
	var x rowIndex
	key := func(k int) []byte { return binary.BigEndian.AppendUint64(nil, uint64(k)) }
	for round := range 2 {
		enc.Reset()
		x.reset()
		const keys = 1000
		for rep := range 3 {
			for k := range keys {
				row := enc.Len()
				enc.Append(key(k), nil)
				x.set(&enc, key(k), xxhash.Sum64(key(k)), row)
				if got, ok := x.get(&enc, key(k), xxhash.Sum64(key(k))); !ok || got != row {
					t.Fatalf("round %d, rep %d, key %d: row %d, %v; want %d", round, rep, k, got, ok, row)
				}
			}
			for k := range keys {
				if got, ok := x.get(&enc, key(k), xxhash.Sum64(key(k))); !ok || got != rep*keys+k {
					t.Fatalf("round %d, after rep %d, key %d: row %d, %v; want %d", round, rep, k, got, ok, rep*keys+k)
				}
			}
		}
		if _, ok := x.get(&enc, key(keys), xxhash.Sum64(key(keys))); ok {
			t.Errorf("round %d: absent key found", round)
		}
	}
}
