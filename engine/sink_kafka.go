package engine

import (
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/connector/kafka"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/state"
)

// openKafkaSink opens the writer of a sink with connector 'kafka': its
// options are checked against the sink's query (a CREATE SINK with bad
// options, or whose brokers do not answer, fails here, before anything is
// scheduled), and it learns of
// committed checkpoints from the coordinator.
//
// A new sink gets its transactional.id here, in its options, which the
// catalog stores with it: the id must stay the same across restarts.
// It is written into rel.Options in place, as openPostgresSink writes its
// progress id: only a new, not yet published, sink lacks it.
func openKafkaSink(e *Engine, rel *catalog.Relation, outbox *state.Table) (exec.SinkWriter, error) {
	if rel.Options["properties.transactional.id"] == "" {
		rel.Options["properties.transactional.id"] = kafka.NewTransactionalID(rel)
	}
	cfg, err := kafka.ParseSinkConfig(rel)
	if err != nil {
		return nil, err
	}
	if e.cat.ByID(rel.ID) == nil {
		// A new sink (CREATE SINK): its brokers must answer, as a source's
		// must. A sink restored after a restart waits for them instead.
		if err := kafka.CheckBrokers(e.ctx, cfg.Brokers, cfg.Security); err != nil {
			return nil, err
		}
	}
	return kafka.NewSink(cfg, rel, kafka.SinkEnv{Outbox: outbox, Commits: e.coord, Log: e.log.With("sink", rel.Name)})
}
