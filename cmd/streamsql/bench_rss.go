package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/streamsql/streamsql/engine"
)

// rssSampler reads the process's resident set size every second while a
// run goes on, and the operator caches' bytes of the engine's memory
// budget, optionally writing each sample as a line to log.
type rssSampler struct {
	stop chan struct{}
	done sync.WaitGroup

	mu          sync.Mutex
	samples     []int64 // bytes, one per second
	opCachesMax int64
}

// startRSSSampler starts sampling; rows returns the rows read so far (for
// the log lines). log may be nil.
func startRSSSampler(eng *engine.Engine, rows func() int64, log io.Writer) *rssSampler {
	s := &rssSampler{stop: make(chan struct{})}
	start := time.Now()
	s.done.Add(1)
	go func() {
		defer s.done.Done()
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-tick.C:
			}
			rss := currentRSS()
			var caches int64
			for _, u := range eng.MemoryUsage() {
				if u.Component == "operator_caches" {
					caches = u.Used
				}
			}
			s.mu.Lock()
			s.samples = append(s.samples, rss)
			s.opCachesMax = max(s.opCachesMax, caches)
			s.mu.Unlock()
			if log != nil {
				fmt.Fprintf(log, "%.0f\t%d\t%d\t%d\n", time.Since(start).Seconds(), rows(), rss>>20, caches>>20)
			}
		}
	}()
	return s
}

// finish stops sampling and fills r's RSS figures.
func (s *rssSampler) finish(r *nexmarkResult) {
	close(s.stop)
	s.done.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	r.OperatorCacheMaxBytes = s.opCachesMax
	if len(s.samples) == 0 {
		return
	}
	mb := make([]int64, len(s.samples))
	for i, v := range s.samples {
		mb[i] = v >> 20
	}
	r.RSSSamplesMB = mb
	sorted := append([]int64(nil), mb...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	r.RSSP50MB, r.RSSMaxMB = sorted[len(sorted)/2], sorted[len(sorted)-1]
	// The trend after warm-up: the median of the last quarter of the
	// samples against the median of the second quarter.
	if n := len(mb); n >= 8 {
		r.RSSSecondQuarterP50MB = median(mb[n/4 : n/2])
		r.RSSLastQuarterP50MB = median(mb[3*n/4:])
	}
}

func median(v []int64) int64 {
	s := append([]int64(nil), v...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// currentRSS is the process's resident set size now (VmRSS), in bytes, or
// 0 where /proc is not there.
func currentRSS() int64 { return procStatusBytes("VmRSS:") }

// procStatusBytes reads the field of /proc/self/status named field (a size
// in kB) in bytes, or 0 where /proc is not there.
func procStatusBytes(field string) int64 {
	fh, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}
