package main

import (
	_ "github.com/apache/arrow-go/v18/arrow/array"
	_ "github.com/cockroachdb/pebble/v2"
	_ "github.com/jackc/pgx/v5"
	_ "github.com/jackc/pgx/v5/pgproto3"
	_ "github.com/pganalyze/pg_query_go/v6"
	_ "github.com/spf13/cobra"
	_ "github.com/cockroachdb/datadriven"
	_ "github.com/cockroachdb/apd/v3"
)

func main() {}
