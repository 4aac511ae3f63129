package engine

import "github.com/streamsql/streamsql/sql"

func isSessionCommand(st sql.Statement) bool { return false }
