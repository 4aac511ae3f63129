package engine

import (
	"context"
	"time"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/connector/postgres"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/state"
)

func init() { sinkConnectors["postgres"] = openPostgresSink }

// openPostgresSink opens the writer of a sink with connector 'postgres':
// its options are checked against the sink's query, and it learns of
// committed checkpoints from the coordinator.
//
// A new sink (one without a progress id yet) is checked against its
// target table, which must be reachable, here, so that CREATE SINK fails
// with the reason; it gets its progress id, which the catalog stores in
// its options: the id must stay the same across restarts. A restart does
// not contact PostgreSQL here: delivery connects, and retries, on its own.
//
// The id is written into rel.Options in place, which is safe because no
// one else reads rel then: only a new sink lacks the id, and its relation
// is published (catalog, store) only once its dataflow is built. A
// restored or rebuilt sink finds the id stored and writes nothing.
func openPostgresSink(e *Engine, rel *catalog.Relation, outbox *state.Table) (exec.SinkWriter, error) {
	cfg, err := postgres.ParseConfig(rel)
	if err != nil {
		return nil, err
	}
	if rel.Options[postgres.ProgressIDOption] == "" {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := postgres.CheckTarget(ctx, cfg); err != nil {
			return nil, err
		}
		rel.Options[postgres.ProgressIDOption] = cfg.ProgressID
	}
	return postgres.NewSink(cfg, postgres.Env{Outbox: outbox, Commits: e.coord, Log: e.log.With("sink", rel.Name)})
}
