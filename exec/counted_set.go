package exec

import (
	"encoding/binary"

	"github.com/streamsql/streamsql/state"
)

// addCount adds delta to the count stored under key in t, a counted
// multiset (varint counts; a key whose count falls to zero or below is
// deleted), and returns the count before and after. buf is scratch space
// for the encoded count.
func addCount(t *state.Table, key []byte, delta int64, buf *[]byte) (before, after int64, err error) {
	v, ok, err := t.Get(key)
	if err != nil {
		return 0, 0, err
	}
	if ok {
		before, _ = binary.Varint(v)
	}
	after = before + delta
	if after > 0 {
		*buf = binary.AppendVarint((*buf)[:0], after)
		t.Put(key, *buf)
	} else {
		t.Delete(key)
	}
	return before, after, nil
}
