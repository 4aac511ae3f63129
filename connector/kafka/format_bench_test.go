package kafka

import (
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/types"
	"github.com/twmb/franz-go/pkg/kgo"
)

// BenchmarkDecode decodes messages of four columns into Arrow batches of
// 1024 rows (decoding only: no broker).
func BenchmarkDecode(b *testing.B) {
	cols := []Column{{Name: "id", Type: types.Int64T}, {Name: "k", Type: types.Int32T}, {Name: "v", Type: types.TextT}, {Name: "price", Type: types.Float64T}}
	for _, enc := range []string{"json", "csv"} {
		b.Run(enc, func(b *testing.B) {
			o := &SourceOptions{Format: "plain", Encode: enc, Delimiter: ',', WithoutHeader: true}
			bb, err := NewBatchBuilder(memory.DefaultAllocator, o, cols)
			if err != nil {
				b.Fatal(err)
			}
			defer bb.Release()
			recs := make([]*kgo.Record, 1024)
			for i := range recs {
				v := fmt.Sprintf(`{"id": %d, "k": %d, "v": "value %d", "price": %d.25}`, i, i%10, i, i)
				if enc == "csv" {
					v = fmt.Sprintf(`%d,%d,value %d,%d.25`, i, i%10, i, i)
				}
				recs[i] = &kgo.Record{Value: []byte(v), Offset: int64(i)}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for n := 0; n < b.N; n++ {
				r := recs[n%len(recs)]
				if err := bb.Add(r); err != nil {
					b.Fatal(err)
				}
				if bb.Rows() == len(recs) {
					bb.Finish().Release()
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
