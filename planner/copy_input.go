package planner

import (
	"github.com/streamsql/streamsql/ir"
)

// CopyInput is the rows of a COPY FROM STDIN (batch plans only), which the
// statement hands the executor (exec.Env.CopyInput).
type CopyInput struct {
	Cols []ir.Column
}

func (n *CopyInput) Columns() []ir.Column { return n.Cols }
func (n *CopyInput) StreamKey() []int     { return nil }
func (n *CopyInput) Inputs() []Node       { return nil }
