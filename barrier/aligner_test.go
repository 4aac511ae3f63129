package barrier

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestAligner feeds explicit interleavings of barriers and closed inputs to an
// Aligner and prints, after each event, what completed or aborted and which
// inputs may be read.
func TestAligner(t *testing.T) {
	datadriven.Walk(t, "testdata/aligner", func(t *testing.T, path string) {
		var a *Aligner
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			var step Step
			switch d.Cmd {
			case "new":
				var n int
				var mode string
				d.ScanArgs(t, "inputs", &n)
				d.ScanArgs(t, "mode", &mode)
				m := ExactlyOnce
				if mode == "at_least_once" {
					m = AtLeastOnce
				}
				a = NewAligner(n, m)
			case "barrier":
				var in int
				var epoch uint64
				d.ScanArgs(t, "input", &in)
				d.ScanArgs(t, "epoch", &epoch)
				step = a.OnBarrier(in, epoch)
			case "close":
				var in int
				d.ScanArgs(t, "input", &in)
				step = a.OnClose(in)
			default:
				d.Fatalf(t, "unknown command %s", d.Cmd)
			}
			var b strings.Builder
			if step.Aborted != 0 {
				fmt.Fprintf(&b, "aborted %d\n", step.Aborted)
			}
			if step.Complete != 0 {
				fmt.Fprintf(&b, "complete %d\n", step.Complete)
			}
			var readable []string
			for i := range a.closed {
				if a.Readable(i) {
					readable = append(readable, fmt.Sprint(i))
				}
			}
			fmt.Fprintf(&b, "readable: [%s]", strings.Join(readable, " "))
			if a.Aligning() != 0 {
				fmt.Fprintf(&b, " aligning: %d", a.Aligning())
			}
			return b.String()
		})
	})
}
