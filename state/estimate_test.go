package state

import (
	"encoding/binary"
	"testing"
)

// TestEstimateRows checks the exact counts below the limits and the lower
// bound above them, for rows still in the memtable (none on disk).
func TestEstimateRows(t *testing.T) {
	s, err := Open(MemoryDir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for id, rows := range map[TableID]int{1: 0, 2: 10, 3: 500, 4: 5000} {
		tb := s.Table(id)
		for i := 0; i < rows; i++ {
			tb.Put(binary.BigEndian.AppendUint32(nil, uint32(i)), []byte("row"))
		}
		tb.Seal(1)
	}
	if _, err := s.Commit(1); err != nil {
		t.Fatal(err)
	}
	snap := s.Snapshot()
	defer snap.Release()
	for _, c := range []struct {
		id   TableID
		want float64
	}{{1, 0}, {2, 10}, {3, 500}, {4, 1000}, {99, 0}} {
		got, err := snap.EstimateRows(c.id, 100, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("table %d: %v rows, want %v", c.id, got, c.want)
		}
	}
}
