package main

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/streamsql/streamsql/state"
)

func newRestoreCmd() *cobra.Command {
	var from, dataDir string
	cmd := &cobra.Command{
		Use:   "restore --from SAVEPOINT_DIR --data-dir NEW_DIR",
		Short: "Prepare a new data directory from a savepoint",
		Long: `Copies a savepoint (made with SELECT create_savepoint('name'); they live in
<data-dir>/savepoints/<name>) into a new, empty data directory. A server started
on it resumes every table, view and source position as of the savepoint. A
savepoint written by an incompatible version is refused.`,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(*cobra.Command, []string) error {
			if from == "" || dataDir == "" {
				return fmt.Errorf("restore needs --from and --data-dir")
			}
			info, err := state.RestoreSavepoint(from, dataDir)
			if err != nil {
				return err
			}
			fmt.Printf("restored savepoint %s (epoch %d, created %s) into %s\n",
				info.Name, info.Epoch, info.Created.Format("2006-01-02 15:04:05 MST"), dataDir)
			return nil
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "savepoint directory")
	cmd.Flags().StringVar(&dataDir, "data-dir", "", "new data directory (must not exist or be empty)")
	return cmd
}
