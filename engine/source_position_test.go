package engine

import (
	"encoding/binary"
	"slices"
	"testing"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/connector/nexmark"
	"github.com/streamsql/streamsql/state"
)

// TestSourcePositionsPerSplit checks where a reader of a source of five
// splits finds its splits' positions: each split's own key, else the one
// key of every split that readers kept before they were split (so a data
// directory from then resumes where it stopped).
func TestSourcePositionsPerSplit(t *testing.T) {
	store, err := state.Open(":memory:", state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	table := store.Table(1)
	// The old key: splits 0..4 at rows 10, 11, 12, 13, 14, then the cursor.
	var legacy []byte
	for s := range 5 {
		legacy = binary.AppendVarint(legacy, int64(10+s))
	}
	legacy = binary.AppendVarint(legacy, 3)
	table.Put(offsetKey, legacy)
	table.Put(splitOffsetKey(3), binary.AppendVarint(nil, 99))
	rel := &catalog.Relation{Name: "bid", Options: map[string]string{"connector": "nexmark",
		"nexmark.table.type": "bid", "nexmark.split.num": "5"}}
	cfg, err := nexmark.ParseOptions(rel.Options)
	if err != nil {
		t.Fatal(err)
	}
	gen := nexmark.New(cfg)
	for _, c := range []struct {
		part readerPart
		want []int64
	}{
		{readerPart{0, 1}, []int64{10, 11, 12, 99, 14}},
		{readerPart{1, 2}, []int64{11, 99}},
		{readerPart{2, 3}, []int64{12}},
	} {
		r := &sourceReader{rel: rel, gen: gen, offset: table}
		for s := c.part.index; s < gen.Splits(); s += c.part.count {
			r.splits = append(r.splits, s)
		}
		r.next = make([]int64, len(r.splits))
		if err := r.loadPositions(); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(r.next, c.want) {
			t.Errorf("reader %d of %d: positions %v, want %v", c.part.index, c.part.count, r.next, c.want)
		}
	}
}
