package state

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestTableDataDriven runs the scripts in testdata/table (rewrite the expected
// output with -rewrite). Commands:
//
//	write [table=N]        input lines: put K V | del K | delrange LO HI | clear
//	                       ("-" is an unbounded range end)
//	seal epoch=N           seals every table used so far
//	commit epoch=N
//	get [table=N]          input: one key per line
//	iter [table=N] [lower=K] [upper=K] [snapshot]
//	                       input: first | last | next | prev | seek-ge K | seek-lt K
//	reopen                 closes and reopens the store (same filesystem)
//	layers [table=N]       the table's uncommitted layers
func TestTableDataDriven(t *testing.T) {
	fs := vfs.NewMem()
	s := openStore(t, "db", fs)
	defer func() { s.Close() }()
	used := map[TableID]bool{}
	table := func(td *datadriven.TestData) *Table {
		id := 1
		td.MaybeScanArgs(t, "table", &id)
		used[TableID(id)] = true
		return s.Table(TableID(id))
	}
	bound := func(s string) []byte {
		if s == "-" {
			return nil
		}
		return []byte(s)
	}
	datadriven.RunTest(t, "testdata/table", func(t *testing.T, td *datadriven.TestData) string {
		switch td.Cmd {
		case "write":
			tb := table(td)
			for _, line := range strings.Split(strings.TrimSpace(td.Input), "\n") {
				f := strings.Fields(line)
				switch {
				case len(f) == 3 && f[0] == "put":
					tb.Put([]byte(f[1]), []byte(f[2]))
				case len(f) == 2 && f[0] == "del":
					tb.Delete([]byte(f[1]))
				case len(f) == 3 && f[0] == "delrange":
					tb.DeleteRange(bound(f[1]), bound(f[2]))
				case len(f) == 1 && f[0] == "clear":
					tb.Clear()
				default:
					t.Fatalf("bad write %q", line)
				}
			}
			return ""
		case "seal":
			var epoch uint64
			td.ScanArgs(t, "epoch", &epoch)
			for id := range used {
				s.Table(id).Seal(epoch)
			}
			return ""
		case "commit":
			var epoch uint64
			td.ScanArgs(t, "epoch", &epoch)
			st, err := s.Commit(epoch)
			if err != nil {
				return "error: " + err.Error()
			}
			return fmt.Sprintf("committed epoch %d: %d keys", s.CommittedEpoch(), st.Keys)
		case "get":
			tb := table(td)
			var out strings.Builder
			for _, k := range strings.Fields(td.Input) {
				v, ok, err := tb.Get([]byte(k))
				switch {
				case err != nil:
					fmt.Fprintf(&out, "%s: error %v\n", k, err)
				case ok:
					fmt.Fprintf(&out, "%s: %s\n", k, v)
				default:
					fmt.Fprintf(&out, "%s: not found\n", k)
				}
			}
			return out.String()
		case "iter":
			var lower, upper string
			var lo, hi []byte
			if td.MaybeScanArgs(t, "lower", &lower) {
				lo = []byte(lower)
			}
			if td.MaybeScanArgs(t, "upper", &upper) {
				hi = []byte(upper)
			}
			var it *Iter
			var err error
			if td.HasArg("snapshot") {
				id := 1
				td.MaybeScanArgs(t, "table", &id)
				sn := s.Snapshot()
				defer sn.Release()
				it, err = sn.NewIter(TableID(id), lo, hi)
			} else {
				it, err = table(td).NewIter(lo, hi)
			}
			if err != nil {
				return "error: " + err.Error()
			}
			defer it.Close()
			var out strings.Builder
			for _, line := range strings.Split(strings.TrimSpace(td.Input), "\n") {
				f := strings.Fields(line)
				var ok bool
				switch f[0] {
				case "first":
					ok = it.First()
				case "last":
					ok = it.Last()
				case "next":
					ok = it.Next()
				case "prev":
					ok = it.Prev()
				case "seek-ge":
					ok = it.SeekGE([]byte(f[1]))
				case "seek-lt":
					ok = it.SeekLT([]byte(f[1]))
				default:
					t.Fatalf("bad iterator op %q", line)
				}
				fmt.Fprintf(&out, "%s: ", line)
				if ok {
					fmt.Fprintf(&out, "%s=%s\n", it.Key(), it.Value())
				} else {
					out.WriteString(".\n")
				}
			}
			if err := it.Error(); err != nil {
				fmt.Fprintf(&out, "error: %v\n", err)
			}
			return out.String()
		case "reopen":
			if err := s.Close(); err != nil {
				return "error: " + err.Error()
			}
			s = openStore(t, "db", fs)
			return fmt.Sprintf("committed epoch %d", s.CommittedEpoch())
		case "layers":
			tb := table(td)
			var out strings.Builder
			for _, l := range *tb.sealed.Load() {
				fmt.Fprintf(&out, "sealed epoch %d: %d points, %d range deletions\n", l.epoch, l.points.Len(), len(l.dels))
			}
			if l := tb.cur; l != nil {
				fmt.Fprintf(&out, "current: %d points, %d range deletions\n", l.points.Len(), len(l.dels))
			}
			return out.String()
		}
		t.Fatalf("unknown command %q", td.Cmd)
		return ""
	})
}
