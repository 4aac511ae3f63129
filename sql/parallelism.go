package sql

import (
	"github.com/streamsql/streamsql/ir"
	"strconv"
)

// AlterViewParallelism is ALTER MATERIALIZED VIEW name SET PARALLELISM
// [= | TO] n: the view's dataflow is rebuilt on n actors at a checkpoint.
type AlterViewParallelism struct {
	Name ir.ObjectName
	// N is the number of actors; 0 means default (one per core).
	N int
	// Path is the session's search path.
	Path []string
}

func (s *AlterViewParallelism) Tag() string { return "ALTER MATERIALIZED VIEW" }

// parseSetParallelism reads "set parallelism [= | to] n | default" after an
// ALTER MATERIALIZED VIEW's name. It returns nil for other words; n out of
// range is left to the engine, which knows the bound.
func parseSetParallelism(name ir.ObjectName, rest []string) ir.Statement {
	if len(rest) < 3 || rest[0] != "set" || rest[1] != "parallelism" {
		return nil
	}
	rest = rest[2:]
	if rest[0] == "=" || rest[0] == "to" {
		rest = rest[1:]
	}
	if len(rest) != 1 {
		return nil
	}
	if rest[0] == "default" {
		return &AlterViewParallelism{Name: name}
	}
	n, err := strconv.Atoi(rest[0])
	if err != nil || n < 0 {
		return nil
	}
	if n == 0 {
		n = -1 // refused by the engine, unlike default
	}
	return &AlterViewParallelism{Name: name, N: n}
}
