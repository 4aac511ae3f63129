package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"

	"github.com/spf13/cobra"
	"github.com/streamsql/streamsql/slt"
)

func newSLTCmd() *cobra.Command {
	var url, eng string
	var shared bool
	cmd := &cobra.Command{
		Use:   "slt [--url URL] FILES...",
		Short: "Run sqllogictest files against a PostgreSQL-protocol server",
		Long: `Runs sqllogictest files (directories are searched for *.slt) against a server
speaking the PostgreSQL protocol: streamsql, or PostgreSQL itself to cross-check
expected results. Each file runs in a database of its own (created before it and
dropped after it), as if on a fresh server; --shared-database runs them all in the
database of --url. Prints per-file and total pass/fail counts; exits 1 on any failure.
The file format is documented in 'go doc github.com/streamsql/streamsql/slt'.`,
		Args:          cobra.MinimumNArgs(1),
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
			defer stop()
			files, err := slt.Files(args...)
			if err != nil {
				return err
			}
			results, err := slt.Run(ctx, files, slt.Options{URL: url, Engine: eng, OwnDatabase: !shared}, os.Stdout)
			if err != nil {
				return err
			}
			for _, r := range results {
				if r.Failed > 0 {
					return fmt.Errorf("sqllogictest failures")
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&url, "url", "postgres://root@127.0.0.1:4566/dev?sslmode=disable", "connection URL of the server under test")
	cmd.Flags().BoolVar(&shared, "shared-database", false, "run every file in the database of --url instead of one database per file")
	cmd.Flags().StringVar(&eng, "engine", "", "engine name for skipif/onlyif (streamsql or postgresql; detected when empty)")
	return cmd
}
