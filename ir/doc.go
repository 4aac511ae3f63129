// Package ir is the bound expression and relation tree shared by sql, planner
// and exec: scalar expressions (Expr), relations (Rel), statements, the function
// and cast catalogs. It imports neither the parser nor package sql, so the
// packages that plan and run queries build without cgo.
package ir
