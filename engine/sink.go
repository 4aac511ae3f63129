package engine

import (
	"context"
	"fmt"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// A sink is a view's dataflow whose last operator hands the change stream
// to a connector (exec.Sink) instead of storing rows: it is created,
// backfilled, checkpointed, restored and dropped as a materialized view is
// (view.go), and cannot be read.

// sinkConnectors are the sink connectors, by name. outbox is the sink's
// own state table (its relation's StateTable, which a sink stores no rows
// in): the writer may keep there what must be part of its checkpoints,
// writing and sealing it at its barriers.
var sinkConnectors = map[string]func(e *Engine, rel *catalog.Relation, outbox *state.Table) (exec.SinkWriter, error){
	"blackhole": func(*Engine, *catalog.Relation, *state.Table) (exec.SinkWriter, error) { return exec.Blackhole{}, nil },
	"kafka":     openKafkaSink,
}

// createSink creates a sink (CREATE SINK).
func (e *Engine) createSink(ctx context.Context, cat *catalog.Catalog, st *sql.CreateSink, atLeastOnce bool, parallelism int, w notifier) error {
	name := st.Options["connector"]
	if sinkConnectors[name] == nil {
		return sqlerr.New(sqlerr.FeatureNotSupported, "sink connector \"%s\" is not supported", name).
			WithHint("The sink connectors are: blackhole, kafka.")
	}
	return e.createView(ctx, cat, st.View, atLeastOnce, parallelism, w, st.Options)
}

// viewKind is the kind of relation createView makes.
func viewKind(sinkOptions map[string]string) catalog.Kind {
	if sinkOptions != nil {
		return catalog.Sink
	}
	return catalog.MaterializedView
}

// buildSink builds a sink's dataflow into v, its writer from the sink's
// connector.
func (e *Engine) buildSink(env exec.Env, rel *catalog.Relation, plan *planner.StreamPlan, v *view) (*exec.Dataflow, error) {
	sink, err := e.openSink(rel, v)
	if err != nil {
		return nil, err
	}
	return exec.BuildSink(env, plan, sink, v.disp)
}

// openSink opens the writer of sink rel.
func (e *Engine) openSink(rel *catalog.Relation, v *view) (*exec.Sink, error) {
	if sql.IsSubscription(rel) {
		return exec.NewSink(e.openChangelog(rel, v), &v.sinkRows), nil
	}
	open := sinkConnectors[rel.Options["connector"]]
	if open == nil {
		return nil, fmt.Errorf("sink %s: unknown connector %q", rel.Name, rel.Options["connector"])
	}
	w, err := open(e, rel, e.store.Table(state.TableID(rel.StateTable)))
	if err != nil {
		return nil, err
	}
	return exec.NewSink(w, &v.sinkRows), nil
}

// sinkRows lists the sinks with the changes each has written since the
// server started, and its status.
func (e *Engine) sinkRows(cat *catalog.Catalog) ([][]types.Datum, error) {
	var rows [][]types.Datum
	for _, r := range cat.InDatabase() {
		if r.Kind != catalog.Sink {
			continue
		}
		e.mu.Lock()
		v := e.views[r.ID]
		e.mu.Unlock()
		status, written := "running", int64(0)
		if v != nil {
			written = v.sinkRows.Load()
			if p := v.failed.Load(); p != nil {
				status = "failed: " + (*p).Error()
			}
		}
		rows = append(rows, []types.Datum{types.DText(r.Name), types.DText(r.Options["connector"]), types.DInt(written),
			types.DText(status), types.DText(r.Schema), types.DText(r.SQL)})
	}
	return rows, nil
}
