package difftest

import (
	"context"
	"flag"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/streamsql/streamsql/internal/testserver"
)

// parallelismFlag sets streaming_parallelism on every streamsql connection,
// so that the views run at that parallelism: results must not depend on it
// (go test ./internal/difftest -difftest.parallelism=1, then =4).
var parallelismFlag = flag.Int("difftest.parallelism", 0, "difftest: SET streaming_parallelism on every streamsql connection (0: the default, one actor per core)")

// connect opens a streamsql connection with the test's parallelism.
func connect(ctx context.Context, s *testserver.Server) (*pgx.Conn, error) {
	c, err := s.Conn(ctx)
	if err != nil || *parallelismFlag <= 0 {
		return c, err
	}
	if _, err := c.Exec(ctx, fmt.Sprintf("SET streaming_parallelism = %d", *parallelismFlag)); err != nil {
		c.Close(ctx)
		return nil, err
	}
	return c, nil
}
