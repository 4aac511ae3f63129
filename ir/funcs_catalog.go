package ir

import (
	"github.com/streamsql/streamsql/types"
)

// FnSizePretty is pg_size_pretty(bigint).
const FnSizePretty = "pg_size_pretty"

// FnSetConfigRows is set_config over values that are not constants, which
// fails when evaluated.
const FnSetConfigRows = "set_config_rows"

func init() {
	def(FnSizePretty, types.TextT, types.Int64T)
	def(FnSetConfigRows, types.TextT, types.TextT, types.TextT, types.BoolT)
}
