package engine

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// cdcConnector is the connector of a PostgreSQL change-data-capture source.
const cdcConnector = "postgres-cdc"

// SQLSTATEs of CDC errors that sqlerr does not name.
const (
	cdcConnectionFailed = "08001" // sqlclient_unable_to_establish_sqlconnection
	cdcNotInPrereqState = "55000" // object_not_in_prerequisite_state
)

// cdcConfig is a postgres-cdc source's connection options (RisingWave's
// names).
type cdcConfig struct {
	host, port, user, password, database string
	slot, publication                    string
	createPublication                    bool
}

func parseCDCConfig(opts map[string]string) (cdcConfig, error) {
	c := cdcConfig{host: opts["hostname"], port: opts["port"], user: opts["username"], password: opts["password"],
		database: opts["database.name"], slot: opts["slot.name"], publication: opts["publication.name"]}
	if c.port == "" {
		c.port = "5432"
	}
	if c.database == "" {
		c.database = "postgres"
	}
	for _, need := range []struct{ name, v string }{{"hostname", c.host}, {"username", c.user}, {"slot.name", c.slot}, {"publication.name", c.publication}} {
		if need.v == "" {
			return c, sqlerr.New(sqlerr.InvalidParameterValue, "a postgres-cdc source needs the option %s", need.name)
		}
	}
	// Each table of the source has its slot, named slot.name_<table id>.
	if len(c.slot) > 50 || strings.Trim(c.slot, "abcdefghijklmnopqrstuvwxyz0123456789_") != "" {
		return c, sqlerr.New(sqlerr.InvalidParameterValue, "invalid slot.name %q: lower-case letters, digits and underscores, at most 50", c.slot)
	}
	switch v := strings.ToLower(opts["publication.create.enable"]); v {
	case "", "false":
	case "true":
		c.createPublication = true
	default:
		return c, sqlerr.New(sqlerr.InvalidParameterValue, "publication.create.enable must be 'true' or 'false', not %q", v)
	}
	return c, nil
}

// connString returns the upstream's connection string; replication asks for
// a logical replication connection.
func (c cdcConfig) connString(replication bool) string {
	u := url.URL{Scheme: "postgres", User: url.UserPassword(c.user, c.password), Host: net.JoinHostPort(c.host, c.port), Path: "/" + c.database}
	q := url.Values{"sslmode": {"prefer"}, "connect_timeout": {"10"}}
	if replication {
		q.Set("replication", "database")
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// addr is the upstream's address, for errors.
func (c cdcConfig) addr() string { return net.JoinHostPort(c.host, c.port) }

// connect opens a connection to the upstream; a failure is 08001 naming
// the address (or the upstream's own error, such as a bad password).
func (c cdcConfig) connect(ctx context.Context) (*pgx.Conn, error) {
	conn, err := pgx.Connect(ctx, c.connString(false))
	if err != nil {
		return nil, c.connectError(err)
	}
	return conn, nil
}

func (c cdcConfig) connectError(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return sqlerr.New(pe.Code, "postgres-cdc source at %s: %s", c.addr(), pe.Message)
	}
	return sqlerr.New(cdcConnectionFailed, "could not connect to the upstream PostgreSQL at %s: %v", c.addr(), err)
}

// createCDCSource validates a postgres-cdc source against its upstream
// (reachable, wal_level logical, the publication exists or is created) and
// records it. Its tables' slots are created with their snapshots, by CREATE
// TABLE ... FROM. (Called with ddlMu held, the name checked free.)
func (e *Engine) createCDCSource(ctx context.Context, cat *catalog.Catalog, stmt *sql.CreateSource) error {
	if len(stmt.Columns) > 0 {
		return sqlerr.New(sqlerr.SyntaxError, "a postgres-cdc source has no column list: its tables declare their columns (CREATE TABLE ... FROM %s TABLE '...')", stmt.Name)
	}
	cfg, err := parseCDCConfig(stmt.Options)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	conn, err := cfg.connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	var walLevel string
	if err := conn.QueryRow(ctx, "SHOW wal_level").Scan(&walLevel); err != nil {
		return cfg.connectError(err)
	}
	if walLevel != "logical" {
		return sqlerr.New(cdcNotInPrereqState, "the upstream PostgreSQL at %s has wal_level = %s: logical replication needs wal_level = logical", cfg.addr(), walLevel)
	}
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_publication WHERE pubname = $1)", cfg.publication).Scan(&exists); err != nil {
		return cfg.connectError(err)
	}
	if !exists {
		if !cfg.createPublication {
			return sqlerr.New(sqlerr.UndefinedObject, "publication \"%s\" does not exist upstream at %s (create it, or set publication.create.enable = 'true')", cfg.publication, cfg.addr())
		}
		if _, err := conn.Exec(ctx, "CREATE PUBLICATION "+pgx.Identifier{cfg.publication}.Sanitize()); err != nil {
			return cfg.connectError(err)
		}
	}
	rel := &catalog.Relation{
		Database: cat.DatabaseName(),
		ID:       e.catSrc.allocIDs(1)[0],
		Schema:   stmt.Schema,
		Name:     stmt.Name,
		Kind:     catalog.Source,
		Columns:  []catalog.Column{{Name: catalog.RowIDColumn, Type: types.Int64T, Hidden: true, NotNull: true}},
		Options:  stmt.Options,
	}
	rel.Key = []int{0}
	var catErr error
	epoch := e.coord.Schedule(barrier.Change{AfterInject: func(uint64) { catErr = e.catSrc.put(rel) }})
	if err := e.awaitCommit(e.ctx, epoch+1); err != nil {
		return err
	}
	if catErr != nil {
		return catErr
	}
	cat.Add(rel)
	return nil
}

// refuseCDCWrite refuses DML on a table fed by a CDC source.
// Tables fed by Kafka accept DML, as RisingWave's tables with a connector
// do: their rows mix the topic's and the statements'.
func refuseCDCWrite(rel *catalog.Relation) error {
	if rel.CDCOffsetTable == 0 || isKafkaTable(rel) {
		return nil
	}
	return sqlerr.New(sqlerr.WrongObjectType, "cannot change table \"%s\": it is fed by source %s (upstream table %s)", rel.Name, rel.Options["cdc.source"], rel.Options["cdc.table"])
}

// cdcSlotName is the replication slot of the CDC table rel.
func cdcSlotName(cfg cdcConfig, rel *catalog.Relation) string {
	return fmt.Sprintf("%s_%d", cfg.slot, rel.ID)
}
