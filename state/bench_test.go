package state

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/streamsql/streamsql/types"
)

// BenchmarkCommit1kKeys measures an epoch of 1000 changed keys: Put, Seal and
// a synced Commit.
func BenchmarkCommit1kKeys(b *testing.B) {
	for _, disk := range []bool{false, true} {
		b.Run(fmt.Sprintf("disk=%v", disk), func(b *testing.B) {
			var fs vfs.FS = vfs.NewMem()
			dir := "db"
			if disk {
				fs, dir = nil, b.TempDir()
			}
			s := openStore(b, dir, fs)
			defer s.Close()
			tb := s.Table(1)
			key := make([]byte, 8)
			val := make([]byte, 32)
			var n uint64
			b.ResetTimer()
			for epoch := uint64(1); epoch <= uint64(b.N); epoch++ {
				for range 1000 {
					n++
					// Spread keys over a 100k key space so epochs overwrite.
					binary.BigEndian.PutUint64(key, (n*2654435761)%100_000)
					binary.BigEndian.PutUint64(val, n)
					tb.Put(key, val)
				}
				tb.Seal(epoch)
				if _, err := s.Commit(epoch); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)*1000/b.Elapsed().Seconds(), "keys/s")
		})
	}
}

// BenchmarkGet compares a Get answered by the current layer with one answered
// by Pebble (from an sstable after a flush).
func BenchmarkGet(b *testing.B) {
	const keys = 100_000
	for _, where := range []string{"layer", "pebble"} {
		b.Run(where, func(b *testing.B) {
			s, err := Open(MemoryDir, Options{Logger: quietLogger})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			tb := s.Table(1)
			key := make([]byte, 8)
			for i := range keys {
				binary.BigEndian.PutUint64(key, uint64(i))
				tb.Put(key, key)
			}
			if where == "pebble" {
				tb.Seal(1)
				if _, err := s.Commit(1); err != nil {
					b.Fatal(err)
				}
				if err := s.db.Flush(); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				binary.BigEndian.PutUint64(key, uint64(i*7919%keys))
				if _, ok, err := tb.Get(key); !ok || err != nil {
					b.Fatal("missing key", err)
				}
			}
		})
	}
}

func benchKeyColumn(b *testing.B, typ types.T, col arrow.Array) {
	n := col.Len()
	b.Run("AppendKey", func(b *testing.B) {
		buf := make([]byte, 0, 64)
		for i := 0; i < b.N; i++ {
			for r := 0; r < n; r++ {
				buf = AppendKey(buf[:0], typ, col, r)
			}
		}
		b.ReportMetric(float64(b.N)*float64(n)/b.Elapsed().Seconds(), "rows/s")
	})
	b.Run("KeyEncoder", func(b *testing.B) {
		enc := NewKeyEncoder([]types.T{typ})
		cols := []arrow.Array{col}
		for i := 0; i < b.N; i++ {
			enc.Encode(cols)
		}
		b.ReportMetric(float64(b.N)*float64(n)/b.Elapsed().Seconds(), "rows/s")
	})
}

// BenchmarkKeyEncodeInt64 and BenchmarkKeyEncodeString encode 1024-row
// columns.
func BenchmarkKeyEncodeInt64(b *testing.B) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(b, 0)
	bld := array.NewInt64Builder(mem)
	for i := range 1024 {
		bld.Append(int64(i * 7919))
	}
	col := bld.NewArray()
	bld.Release()
	defer col.Release()
	benchKeyColumn(b, types.Int64T, col)
}

func BenchmarkKeyEncodeString(b *testing.B) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(b, 0)
	bld := array.NewStringBuilder(mem)
	for i := range 1024 {
		bld.Append(fmt.Sprintf("customer-%06d@example.com", i*7919))
	}
	col := bld.NewArray()
	bld.Release()
	defer col.Release()
	benchKeyColumn(b, types.TextT, col)
}

func BenchmarkRowCodecAppend(b *testing.B) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(b, 0)
	ts := []types.T{types.Int64T, types.TextT, types.NumericT, types.TimestampT}
	r := newRand(b)
	cols := make([]arrow.Array, len(ts))
	for j, typ := range ts {
		ds := make([]types.Datum, 1024)
		for i := range ds {
			ds[i] = randDatum(r, typ, true)
		}
		cols[j] = buildColumn(mem, typ, ds)
		defer cols[j].Release()
	}
	codec := NewRowCodec(ts)
	buf := make([]byte, 0, 256)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for row := 0; row < 1024; row++ {
			buf = codec.Append(buf[:0], cols, row)
		}
	}
	b.ReportMetric(float64(b.N)*1024/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkLayerPutValueSet measures Put into an epoch's current layer with
// keys shaped like a grouped min/max value set: vnode, group key (an int64
// of 1000 groups), the value (int64) and the row key (int64), 29 bytes, in
// the order a load delivers them. Each op fills a fresh layer with 100,000
// keys, as one 100,000-row statement does.
func BenchmarkLayerPutValueSet(b *testing.B) {
	const keys = 100_000
	s, err := Open(MemoryDir, Options{Logger: quietLogger})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	tb := s.Table(1)
	all := make([][]byte, keys)
	for i := range all {
		id := int64(i + 1)
		g := id * 7919 % 1000003 % 1000
		v := id % 10007
		k := AppendVNode(nil, 0)
		k = append(k, keyNotNull)
		k = binary.BigEndian.AppendUint64(k, uint64(g)^(1<<63))
		SetVNode(k, len(k))
		k = append(k, keyNotNull)
		k = binary.BigEndian.AppendUint64(k, uint64(v)^(1<<63))
		k = append(k, keyNotNull)
		k = binary.BigEndian.AppendUint64(k, uint64(id)^(1<<63))
		all[i] = k
	}
	val := make([]byte, 9)
	b.ResetTimer()
	for range b.N {
		tb.cur = nil
		for _, k := range all {
			tb.Put(k, val)
		}
	}
	b.ReportMetric(float64(b.N)*keys/b.Elapsed().Seconds(), "keys/s")
}

// BenchmarkCommitLargeEpoch measures the Commit of an epoch the size of one
// second of Nexmark q0 into a view (200k new keys of 8 bytes, values of 100):
// building the Pebble batch from the sealed layer and committing it. The
// writes and the Seal are not timed. The block cache is the server's on a
// machine with 16 GB (1 GiB), so the memtable (128 MiB) takes the batch, as
// in the server, rather than Pebble's path for batches over half a memtable.
func BenchmarkCommitLargeEpoch(b *testing.B) {
	s, err := Open("db", Options{FS: vfs.NewMem(), Logger: quietLogger, CacheSize: 1 << 30})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	tb := s.Table(1)
	key := make([]byte, 8)
	val := make([]byte, 100)
	var n uint64
	b.ReportAllocs()
	for epoch := uint64(1); epoch <= uint64(b.N); epoch++ {
		b.StopTimer()
		for range 200_000 {
			n++
			binary.BigEndian.PutUint64(key, n)
			binary.BigEndian.PutUint64(val, n)
			tb.Put(key, val)
		}
		tb.Seal(epoch)
		b.StartTimer()
		if _, err := s.Commit(epoch); err != nil {
			b.Fatal(err)
		}
	}
}
