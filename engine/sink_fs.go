package engine

import (
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/connector/fs"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/state"
)

func init() { sinkConnectors["fs"] = openFSSink }

// openFSSink opens the writer of a sink with connector 'fs': its options
// are checked against the sink's query, and it learns of committed
// checkpoints from the coordinator.
func openFSSink(e *Engine, rel *catalog.Relation, _ *state.Table) (exec.SinkWriter, error) {
	cfg, err := fs.ParseConfig(rel)
	if err != nil {
		return nil, err
	}
	return fs.NewSink(cfg, rel, e.coord, e.log.With("sink", rel.Name))
}
