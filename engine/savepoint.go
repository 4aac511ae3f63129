package engine

import (
	"context"
	"path/filepath"

	"github.com/streamsql/streamsql/pgwire"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// savepointRoot is where the savepoints of the database live.
func (e *Engine) savepointRoot() string { return filepath.Join(e.opts.DataDir, "savepoints") }

// savepoint creates or drops a savepoint. Creating one first commits a
// checkpoint, so the savepoint holds everything acknowledged before it.
func (e *Engine) savepoint(ctx context.Context, st *sql.Savepoint, w pgwire.ResultWriter) error {
	if e.opts.DataDir == state.MemoryDir {
		return sqlerr.Unsupported("savepoints of an in-memory database (--data-dir :memory:)")
	}
	col := "create_savepoint"
	var result string
	if st.Drop {
		col = "drop_savepoint"
		if err := state.DropSavepoint(e.savepointRoot(), st.Name); err != nil {
			return err
		}
		result = st.Name
	} else {
		if err := e.Flush(ctx); err != nil {
			return err
		}
		info, err := e.store.CreateSavepoint(e.savepointRoot(), st.Name)
		if err != nil {
			return err
		}
		e.log.Info("savepoint created", "name", info.Name, "epoch", info.Epoch, "path", info.Path)
		result = info.Path
	}
	return writeTextColumn(w, e, col, []string{result}, "SELECT 1")
}

// savepointRows lists the savepoints.
func (e *Engine) savepointRows() ([][]types.Datum, error) {
	if e.opts.DataDir == state.MemoryDir {
		return nil, nil
	}
	list, err := state.ListSavepoints(e.savepointRoot())
	if err != nil {
		return nil, err
	}
	var rows [][]types.Datum
	for _, sp := range list {
		rows = append(rows, []types.Datum{
			types.DText(sp.Name), types.DInt(int64(sp.Epoch)), types.DInt(sp.Created.UnixMicro()),
			types.DInt(sp.Size), types.DInt(int64(sp.FormatVersion)), types.DText(sp.Path),
		})
	}
	return rows, nil
}
