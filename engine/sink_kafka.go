package engine

import (
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/connector/kafka"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/state"
)

// openKafkaSink opens the writer of a sink with connector 'kafka': its
// options are checked against the sink's query (a CREATE SINK with bad
// options fails here, before anything is scheduled), and it learns of
// committed checkpoints from the coordinator.
func openKafkaSink(e *Engine, rel *catalog.Relation, outbox *state.Table) (exec.SinkWriter, error) {
	cfg, err := kafka.ParseSinkConfig(rel)
	if err != nil {
		return nil, err
	}
	return kafka.NewSink(cfg, rel, kafka.SinkEnv{Outbox: outbox, Commits: e.coord, Log: e.log.With("sink", rel.Name)})
}
