package sidebyside

import (
	"fmt"
	"io"
	"strings"
)

// WriteTable writes r as a Markdown table: one line per workload and
// measure, one column per system, then the ratios of streamsql to each
// other system.
//
// Load lines give rows per second and their ratio is streamsql's rows/s over
// the other's; delta lines give the median and p90 milliseconds until the
// view shows the change, and their ratio is streamsql's median over the
// other's. Each ratio says which system is faster and by how much.
func WriteTable(out io.Writer, r *Result) {
	others := []string{}
	hasStreamSQL := false
	for _, s := range r.Systems {
		if s == StreamSQL {
			hasStreamSQL = true
		} else {
			others = append(others, s)
		}
	}
	fmt.Fprintf(out, "%s rows loaded, %d deltas of each kind (%d rows each).\n\n", thousands(int64(r.Rows)), r.Deltas, DeltaRows)
	header := []string{"workload", "measure"}
	for _, s := range r.Systems {
		header = append(header, DisplayName(s))
	}
	if hasStreamSQL {
		for _, o := range others {
			header = append(header, "streamsql/"+DisplayName(o))
		}
	}
	fmt.Fprintf(out, "| %s |\n|%s\n", strings.Join(header, " | "), strings.Repeat("---|", len(header)))
	for _, w := range Workloads {
		for _, kind := range []string{KindLoad, KindInsert, KindUpdate, KindDelete} {
			line := []string{w.Name, measureName(kind, r.Rows)}
			bySystem := map[string]*Measure{}
			for i := range r.Measures {
				if m := &r.Measures[i]; m.Workload == w.Name && m.Kind == kind {
					bySystem[m.System] = m
				}
			}
			for _, s := range r.Systems {
				line = append(line, cell(bySystem[s], s))
			}
			if hasStreamSQL {
				for _, o := range others {
					line = append(line, ratio(bySystem[StreamSQL], bySystem[o], o))
				}
			}
			fmt.Fprintf(out, "| %s |\n", strings.Join(line, " | "))
		}
	}
	fmt.Fprintf(out, "\nDelta cells: median / p90 ms until the view shows the change; for the systems that refresh, the median of the statement alone in parentheses.\n")
}

func measureName(kind string, rows int) string {
	switch kind {
	case KindLoad:
		return fmt.Sprintf("load %s rows, rows/s", thousands(int64(rows)))
	case KindUpdate:
		return fmt.Sprintf("%s-row UPDATE by id range, ms", thousands(DeltaRows))
	case KindDelete:
		return fmt.Sprintf("%s-row DELETE by id range, ms", thousands(DeltaRows))
	}
	return fmt.Sprintf("%s-row INSERT, ms", thousands(DeltaRows))
}

func cell(m *Measure, system string) string {
	switch {
	case m == nil:
		return ""
	case m.Kind == KindLoad:
		return fmt.Sprintf("%s (%.1f s)", rate(m.RowsPerSec), m.Seconds)
	case system == StreamSQL:
		return fmt.Sprintf("%s / %s", num(m.MedianMS), num(m.P90MS))
	}
	return fmt.Sprintf("%s / %s (%s)", num(m.MedianMS), num(m.P90MS), num(m.StmtMedianMS))
}

// ratio is streamsql's figure over other's, with which is faster.
func ratio(ss, other *Measure, otherSystem string) string {
	if ss == nil || other == nil {
		return ""
	}
	var r, speed float64 // speed > 1: streamsql is faster
	if ss.Kind == KindLoad {
		r = ss.RowsPerSec / other.RowsPerSec
		speed = r
	} else {
		r = ss.MedianMS / other.MedianMS
		speed = 1 / r
	}
	if speed >= 1 {
		return fmt.Sprintf("%.3g (streamsql %.3g× faster)", r, speed)
	}
	return fmt.Sprintf("%.3g (%s %.3g× faster)", r, DisplayName(otherSystem), 1/speed)
}

func num(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

func rate(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.2f M", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.0f k", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

func thousands(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
