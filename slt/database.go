package slt

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// runInOwnDatabase runs one file in a database of its own on the server at
// opts.URL: it creates the database (dropping one of the same name a
// stopped run left behind), runs the file connected to it, and drops it
// after, so that the files of a directory, each written for a fresh server,
// run one after another on one server.
func runInOwnDatabase(ctx context.Context, path string, opts Options) (Result, error) {
	db := fileDatabase(path)
	if err := adminExec(ctx, opts.URL, "DROP DATABASE IF EXISTS "+db, "CREATE DATABASE "+db); err != nil {
		return Result{File: path}, fmt.Errorf("creating database %s for %s: %w", db, path, err)
	}
	inner := opts
	inner.OwnDatabase = false
	var err error
	if inner.URL, err = withDatabase(opts.URL, db); err != nil {
		return Result{File: path}, err
	}
	inner.Restart = rebased(opts.Restart, db)
	inner.Kill = rebased(opts.Kill, db)
	res, runErr := RunFile(ctx, path, inner)
	if err := adminExec(context.WithoutCancel(ctx), opts.URL, "DROP DATABASE IF EXISTS "+db); err != nil && runErr == nil {
		runErr = fmt.Errorf("dropping database %s: %w", db, err)
	}
	return res, runErr
}

// fileDatabase is the database a file runs in: slt_ and the file's base
// name as an identifier.
func fileDatabase(path string) string {
	base := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	var b strings.Builder
	b.WriteString("slt_")
	for _, r := range strings.ToLower(base) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	if b.Len() > 63 {
		return b.String()[:63]
	}
	return b.String()
}

// withDatabase returns rawURL with its database replaced by db.
func withDatabase(rawURL, db string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", fmt.Errorf("connection URL %q: %w", rawURL, err)
	}
	u.Path = "/" + db
	return u.String(), nil
}

// rebased wraps a restart or kill hook so that the URL it returns points
// at db too.
func rebased(hook func(context.Context) (string, error), db string) func(context.Context) (string, error) {
	if hook == nil {
		return nil
	}
	return func(ctx context.Context) (string, error) {
		u, err := hook(ctx)
		if err != nil || u == "" {
			return u, err
		}
		return withDatabase(u, db)
	}
}

// adminExec runs statements, one by one, on a connection of its own to
// rawURL.
func adminExec(ctx context.Context, rawURL string, stmts ...string) error {
	c, err := pgconn.Connect(ctx, rawURL)
	if err != nil {
		return err
	}
	defer c.Close(context.WithoutCancel(ctx))
	for _, s := range stmts {
		if _, err := c.Exec(ctx, s).ReadAll(); err != nil {
			return err
		}
	}
	return nil
}
