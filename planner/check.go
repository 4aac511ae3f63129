package planner

import (
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// checkTypes fails if any node of the plan has a column of unknown type: the
// binder resolves every untyped literal to a type, and operators cannot store
// or hash an untyped column. It turns a binder bug into an internal error
// instead of a failure inside an operator.
func checkTypes(n Node) error {
	for _, c := range n.Columns() {
		if c.Type.Kind == types.Unknown {
			return sqlerr.New(sqlerr.InternalError, "planner: column %q has no type", c.Name)
		}
	}
	for _, in := range n.Inputs() {
		if err := checkTypes(in); err != nil {
			return err
		}
	}
	return nil
}
