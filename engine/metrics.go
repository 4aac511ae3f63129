package engine

import (
	"net/http"
	"sort"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/streamsql/streamsql/catalog"
)

// metrics are the engine's Prometheus metrics. Event metrics (checkpoint
// histograms and counters) are updated as checkpoints complete; the state of
// the running dataflows (operator counters, state sizes, backfills, source
// positions, connections) is read at each scrape by engineCollector, so the
// hot paths only keep their own atomic counters (exec.Stats).
type metrics struct {
	reg *prometheus.Registry

	barrierLatency     prometheus.Histogram
	checkpointDuration prometheus.Histogram
	alignment          prometheus.Histogram
	checkpointBytes    prometheus.Counter
	checkpointKeys     prometheus.Counter
	checkpoints        *prometheus.CounterVec
	statements         *prometheus.HistogramVec
	// stages splits the barrier latency of a completed checkpoint (see
	// checkpointEntry); commitKeys and commitBytes are the size of each
	// checkpoint's batch.
	stages      *prometheus.HistogramVec
	commitKeys  prometheus.Histogram
	commitBytes prometheus.Histogram
}

func newMetrics(e *Engine) *metrics {
	buckets := prometheus.ExponentialBuckets(0.001, 2, 16) // 1ms .. 32s
	m := &metrics{
		reg: prometheus.NewRegistry(),
		barrierLatency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "streamsql_barrier_latency_seconds",
			Help:    "Time from a checkpoint barrier's injection to its epoch's commit.",
			Buckets: buckets,
		}),
		checkpointDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "streamsql_checkpoint_duration_seconds",
			Help:    "Time the state store took to write and sync a checkpoint.",
			Buckets: buckets,
		}),
		alignment: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "streamsql_barrier_alignment_seconds",
			Help:    "Longest barrier alignment of any multi-input dataflow, per checkpoint.",
			Buckets: buckets,
		}),
		checkpointBytes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "streamsql_checkpoint_bytes_total",
			Help: "Bytes written by checkpoints (the size of their Pebble batches).",
		}),
		checkpointKeys: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "streamsql_checkpoint_keys_total",
			Help: "Keys written by checkpoints.",
		}),
		checkpoints: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "streamsql_checkpoints_total",
			Help: "Checkpoints by final status (completed, subsumed).",
		}, []string{"status"}),
		statements: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "streamsql_ddl_duration_seconds",
			Help:    "Duration of DDL statements, by command.",
			Buckets: buckets,
		}, []string{"command"}),
		stages: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "streamsql_checkpoint_stage_seconds",
			Help: "Stages of a completed checkpoint: inject (the barrier reaching every source), " +
				"dataflow (then every view acknowledging it), flush (building the store's batch), " +
				"sync (committing the batch with an fsync).",
			Buckets: prometheus.ExponentialBuckets(0.00005, 2, 17), // 50µs .. 3.3s
		}, []string{"stage"}),
		commitKeys: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "streamsql_checkpoint_commit_keys",
			Help:    "Keys written by one checkpoint.",
			Buckets: prometheus.ExponentialBuckets(1, 4, 12), // 1 .. 4M
		}),
		commitBytes: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "streamsql_checkpoint_commit_bytes",
			Help:    "Bytes written by one checkpoint (the size of its Pebble batch).",
			Buckets: prometheus.ExponentialBuckets(64, 4, 13), // 64B .. 1GiB
		}),
	}
	m.reg.MustRegister(m.barrierLatency, m.checkpointDuration, m.alignment, m.checkpointBytes, m.checkpointKeys,
		m.checkpoints, m.statements, m.stages, m.commitKeys, m.commitBytes, &engineCollector{e: e},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// checkpointDone records a checkpoint that will not change again, and logs
// it if it was slow.
func (m *metrics) checkpointDone(e *Engine, ent checkpointEntry) {
	m.checkpoints.WithLabelValues(ent.Status).Inc()
	if ent.Status != "completed" {
		return
	}
	seconds := func(us int64) float64 { return float64(us) / 1e6 }
	m.barrierLatency.Observe(seconds(ent.Duration))
	m.checkpointDuration.Observe(seconds(ent.Commit))
	if ent.MaxAlign >= 0 {
		m.alignment.Observe(seconds(ent.MaxAlign))
	}
	m.checkpointBytes.Add(float64(ent.Bytes))
	m.checkpointKeys.Add(float64(ent.Keys))
	m.commitKeys.Observe(float64(ent.Keys))
	m.commitBytes.Observe(float64(ent.Bytes))
	for _, st := range []struct {
		name string
		us   int64
	}{{"inject", ent.Inject}, {"dataflow", ent.Dataflow}, {"flush", ent.Flush}, {"sync", ent.Sync}} {
		if st.us >= 0 {
			m.stages.WithLabelValues(st.name).Observe(seconds(st.us))
		}
	}
	if d := time.Duration(ent.Duration) * time.Microsecond; d > max(slowCheckpointIntervals*e.opts.BarrierInterval, slowCheckpointMin) {
		e.log.Warn("slow checkpoint", "epoch", ent.Epoch, "duration", d,
			"commit", time.Duration(ent.Commit)*time.Microsecond,
			"max_alignment", time.Duration(max(ent.MaxAlign, 0))*time.Microsecond,
			"keys", ent.Keys, "bytes", ent.Bytes)
	}
}

// ddlDone records the duration of a DDL statement and logs it.
func (e *Engine) ddlDone(command string, start time.Time, err error) {
	d := time.Since(start)
	e.metrics.statements.WithLabelValues(command).Observe(d.Seconds())
	if err != nil {
		e.log.Info("DDL failed", "command", command, "duration", d, "err", err)
		return
	}
	e.log.Info("DDL done", "command", command, "duration", d)
}

// MetricsHandler serves the Prometheus metrics.
func (e *Engine) MetricsHandler() http.Handler {
	return promhttp.HandlerFor(e.metrics.reg, promhttp.HandlerOpts{})
}

var (
	descOpRowsIn = prometheus.NewDesc("streamsql_operator_rows_in_total",
		"Rows into an operator of a view's dataflow.", []string{"view", "operator", "id"}, nil)
	descOpRowsOut = prometheus.NewDesc("streamsql_operator_rows_out_total",
		"Rows out of an operator of a view's dataflow.", []string{"view", "operator", "id"}, nil)
	descOpSeconds = prometheus.NewDesc("streamsql_operator_seconds_total",
		"Time spent in an operator of a view's dataflow (not downstream of it).", []string{"view", "operator", "id"}, nil)
	descViewState = prometheus.NewDesc("streamsql_view_state_bytes",
		"Estimated bytes on disk of a view's state (its rows and its operators' state).", []string{"view"}, nil)
	descExprErrors = prometheus.NewDesc("streamsql_view_expression_errors_total",
		"Rows of a view whose expressions failed (and yielded NULL).", []string{"view"}, nil)
	descLateRows = prometheus.NewDesc("streamsql_view_late_rows_total",
		"Rows a view dropped for arriving behind its watermark.", []string{"view"}, nil)
	descViewFailed = prometheus.NewDesc("streamsql_view_failed",
		"1 if a view's dataflow failed.", []string{"view"}, nil)
	descBackfillDone = prometheus.NewDesc("streamsql_backfill_rows",
		"Rows a running backfill has read.", []string{"view"}, nil)
	descBackfillTotal = prometheus.NewDesc("streamsql_backfill_total_rows",
		"Estimated rows a running backfill reads in all (its upstreams' rows when it started).", []string{"view"}, nil)
	descSourceRows = prometheus.NewDesc("streamsql_source_rows_total",
		"Rows a view's reader of a source has generated.", []string{"source", "view"}, nil)
	descSourceLag = prometheus.NewDesc("streamsql_source_remaining_rows",
		"Rows a bounded source has left to generate (its lag behind the end of its input).", []string{"source", "view"}, nil)
	descSinkRows = prometheus.NewDesc("streamsql_sink_rows_total",
		"Changes a sink has written.", []string{"sink"}, nil)
	descConnections = prometheus.NewDesc("streamsql_connections",
		"Open client sessions.", nil, nil)
	descCommitted = prometheus.NewDesc("streamsql_committed_epoch",
		"The last committed epoch.", nil, nil)
	descUncommitted = prometheus.NewDesc("streamsql_uncommitted_state_bytes",
		"Bytes written to state and not committed yet (bounded by --max-uncommitted-state).", nil, nil)
	descSourceWaited = prometheus.NewDesc("streamsql_source_backpressure_seconds_total",
		"Time source readers waited for checkpoints to commit the state they produced.", nil, nil)
	descMemory = prometheus.NewDesc("streamsql_memory_bytes",
		"Memory a component of the memory budget holds (operator caches: as estimated by the operators).", []string{"component"}, nil)
	descMemoryShare = prometheus.NewDesc("streamsql_memory_share_bytes",
		"A component's share of the memory budget (--memory-limit).", []string{"component"}, nil)
	descMemoryLimit = prometheus.NewDesc("streamsql_memory_limit_bytes",
		"The memory budget (--memory-limit; 0: none).", nil, nil)
	descRelations = prometheus.NewDesc("streamsql_relations",
		"Relations in the catalog, by kind.", []string{"kind"}, nil)
)

// engineCollector reads the running dataflows at each scrape.
type engineCollector struct{ e *Engine }

func (c *engineCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descOpRowsIn, descOpRowsOut, descOpSeconds, descViewState, descExprErrors,
		descLateRows, descViewFailed, descBackfillDone, descBackfillTotal, descSourceRows, descSourceLag, descSinkRows,
		descConnections, descCommitted, descUncommitted, descSourceWaited, descRelations,
		descMemory, descMemoryShare, descMemoryLimit} {
		ch <- d
	}
}

func (c *engineCollector) Collect(ch chan<- prometheus.Metric) {
	e := c.e
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	for _, v := range e.runningViews() {
		name := v.rel.QualifiedName()
		if v.rel.Schema == catalog.Public {
			name = v.rel.Name
		}
		for _, s := range v.stats.Snapshot() {
			id := strconv.Itoa(s.ID)
			counter(descOpRowsIn, float64(s.RowsIn), name, s.Name, id)
			counter(descOpRowsOut, float64(s.RowsOut), name, s.Name, id)
			counter(descOpSeconds, s.Time.Seconds(), name, s.Name, id)
		}
		var size uint64
		for _, t := range v.tables {
			if n, err := e.store.DiskUsage(t.ID()); err == nil {
				size += n
			}
		}
		gauge(descViewState, float64(size), name)
		counter(descExprErrors, float64(v.exprErrors.Load()), name)
		counter(descLateRows, float64(v.lateRows.Load()), name)
		failed := 0.0
		if v.failed.Load() != nil {
			failed = 1
		}
		gauge(descViewFailed, failed, name)
		if v.rel.Kind == catalog.Sink {
			counter(descSinkRows, float64(v.sinkRows.Load()), name)
		}
		if done, total, ok := e.backfillCounts(v.rel.ID); ok {
			gauge(descBackfillDone, float64(done), name)
			if total >= 0 {
				gauge(descBackfillTotal, float64(total), name)
			}
		}
		// A source read by several of the view's readers (split among its
		// actors) is one series: the sums over them.
		type progress struct{ rows, left int64 }
		var sources []string
		bySource := map[string]*progress{}
		for _, r := range v.readers {
			if r == nil {
				continue
			}
			rows, left := r.progress()
			src := r.source().Name
			p := bySource[src]
			if p == nil {
				p = &progress{}
				bySource[src] = p
				sources = append(sources, src)
			}
			p.rows += rows
			if left < 0 || p.left < 0 {
				p.left = -1
			} else {
				p.left += left
			}
		}
		for _, src := range sources {
			p := bySource[src]
			counter(descSourceRows, float64(p.rows), src, name)
			if p.left >= 0 {
				gauge(descSourceLag, float64(p.left), src, name)
			}
		}
	}
	gauge(descConnections, float64(e.connections()))
	gauge(descCommitted, float64(e.store.CommittedEpoch()))
	gauge(descUncommitted, float64(e.store.UncommittedBytes()))
	ch <- prometheus.MustNewConstMetric(descSourceWaited, prometheus.CounterValue, time.Duration(e.backpressure.waited.Load()).Seconds())
	gauge(descMemoryLimit, float64(e.budget.Limit()))
	for _, u := range e.budget.Usage() {
		gauge(descMemory, float64(u.Used), u.Component)
		gauge(descMemoryShare, float64(u.Share), u.Component)
	}
	kinds := map[string]int{}
	for _, r := range e.cat.All() {
		kinds[r.Kind.String()]++
	}
	for k, n := range kinds {
		gauge(descRelations, float64(n), k)
	}
}

// runningViews returns the running views and sinks, by id.
func (e *Engine) runningViews() []*view {
	e.mu.Lock()
	vs := make([]*view, 0, len(e.views))
	for _, v := range e.views {
		vs = append(vs, v)
	}
	e.mu.Unlock()
	sort.Slice(vs, func(a, b int) bool { return vs[a].rel.ID < vs[b].rel.ID })
	return vs
}

// backfillCounts reports a running backfill's rows done and estimated
// total (-1 until counted).
func (e *Engine) backfillCounts(id uint32) (done, total int64, ok bool) {
	e.mu.Lock()
	j := e.jobs[id]
	e.mu.Unlock()
	if j == nil {
		return 0, 0, false
	}
	return j.rowsDone(), j.total.Load(), true
}

// connections counts the open sessions.
func (e *Engine) connections() int {
	e.dbSessionsMu.Lock()
	defer e.dbSessionsMu.Unlock()
	n := 0
	for _, c := range e.dbSessions {
		n += c
	}
	return n
}
