// Package postgres is the sink connector 'postgres': it applies a view's
// changes to a PostgreSQL table, exactly once (see Sink).
package postgres

import (
	"fmt"
	"math/rand/v2"
	"net"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// Defaults of the sink options.
const (
	// ProgressTable is the table, in the target table's schema, where each
	// sink records the last epoch it applied.
	ProgressTable = "streamsql_sink_progress"
	// DefaultMaxOutboxBytes bounds the committed changes waiting for
	// PostgreSQL (sink.outbox.max.bytes).
	DefaultMaxOutboxBytes = 256 << 20
	// ProgressIDOption is the option holding the sink's key in the progress
	// table, chosen at CREATE SINK unless given, and kept.
	ProgressIDOption = "progress.id"
)

// Config is a PostgreSQL sink's configuration, from its WITH options and
// the relation it writes.
type Config struct {
	// Name is the sink's name, for errors and logs.
	Name                                 string
	Host, Port, User, Password, Database string
	Schema, Table                        string
	// Upsert applies inserts, updates and deletes by primary key (type =
	// 'upsert'); else only inserts are written (type = 'append-only').
	Upsert bool
	// ForceAppendOnly lets an append-only sink take a query that deletes
	// or updates: deletes are dropped, updates written as inserts.
	ForceAppendOnly bool
	// Columns are the sink's visible columns, which the target table's
	// columns of the same names take.
	Columns []Column
	// Key are the upsert key's columns, as indices into Columns.
	Key []int
	// ProgressID is the sink's key in the progress table.
	ProgressID     string
	MaxOutboxBytes int64
}

// Column is a column of the sink's rows.
type Column struct {
	Name string
	Type types.T
	// Index is the column's index in the sink's batches.
	Index int
}

// sinkOptions are the options a PostgreSQL sink accepts, besides connector.
var sinkOptions = map[string]bool{
	"host": true, "port": true, "user": true, "password": true, "database": true,
	"schema": true, "table": true, "type": true, "primary_key": true, "force_append_only": true,
	ProgressIDOption: true, "sink.outbox.max.bytes": true,
}

// ParseConfig checks a PostgreSQL sink's options against the relation it
// writes: its columns, its key and whether it only inserts. Errors carry a
// SQLSTATE. It does not contact PostgreSQL (see CheckTarget).
func ParseConfig(rel *catalog.Relation) (*Config, error) {
	opts := rel.Options
	var unknown []string
	for k := range opts {
		if k != "connector" && !sinkOptions[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		if unknown[0] == "encode" || unknown[0] == "format" {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "a postgres sink takes no FORMAT ... ENCODE clause").
				WithHint("Write type = 'upsert' or type = 'append-only' in WITH (...).")
		}
		return nil, invalid("unknown option %q for a postgres sink", unknown[0])
	}
	c := &Config{
		Name: rel.Name, Host: opts["host"], Port: opts["port"], User: opts["user"], Password: opts["password"],
		Database: opts["database"], Schema: opts["schema"], Table: opts["table"],
		ProgressID: opts[ProgressIDOption], MaxOutboxBytes: DefaultMaxOutboxBytes,
	}
	for _, need := range []struct{ name, v string }{{"host", c.Host}, {"user", c.User}, {"table", c.Table}} {
		if need.v == "" {
			return nil, invalid("a postgres sink needs the option %s", need.name)
		}
	}
	if c.Port == "" {
		c.Port = "5432"
	} else if p, err := strconv.Atoi(c.Port); err != nil || p <= 0 || p > 65535 {
		return nil, invalid("port must be a TCP port number, not %q", c.Port)
	}
	if c.Database == "" {
		c.Database = "postgres"
	}
	if c.Schema == "" {
		c.Schema = "public"
	}
	if c.ProgressID == "" {
		c.ProgressID = NewProgressID(rel)
	}
	if s := opts["sink.outbox.max.bytes"]; s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 {
			return nil, invalid("sink.outbox.max.bytes must be a positive number of bytes, not %q", s)
		}
		c.MaxOutboxBytes = n
	}
	switch v := strings.ToLower(opts["force_append_only"]); v {
	case "", "false":
	case "true":
		c.ForceAppendOnly = true
	default:
		return nil, invalid("force_append_only must be 'true' or 'false', not %q", v)
	}
	for i, col := range rel.Columns {
		if !col.Hidden {
			c.Columns = append(c.Columns, Column{Name: col.Name, Type: col.Type, Index: i})
		}
	}
	if err := c.parseType(opts["type"], rel); err != nil {
		return nil, err
	}
	return c, nil
}

// parseType sets the sink's mode and, for upsert, its key: primary_key,
// else the relation's key if all its columns are visible.
func (c *Config) parseType(typ string, rel *catalog.Relation) error {
	switch strings.ToLower(typ) {
	case "upsert":
		c.Upsert = true
	case "append-only":
		if !rel.AppendOnly && !c.ForceAppendOnly {
			return invalid("the sink cannot be append-only: its query deletes or updates rows").
				WithHint("Add force_append_only = 'true' to drop deletes and write updates as inserts, or use type = 'upsert'.")
		}
		if rel.Options["primary_key"] != "" {
			return invalid("primary_key applies to type = 'upsert' only")
		}
		return nil
	case "":
		return invalid("a postgres sink needs the option type ('upsert' or 'append-only')")
	default:
		return invalid("type must be 'upsert' or 'append-only', not %q", typ)
	}
	if c.ForceAppendOnly {
		return invalid("force_append_only applies to type = 'append-only' only")
	}
	if pk := rel.Options["primary_key"]; pk != "" {
		for _, name := range strings.Split(pk, ",") {
			i := c.column(strings.TrimSpace(name))
			if i < 0 {
				return sqlerr.New(sqlerr.UndefinedColumn, "primary_key column \"%s\" of sink %s does not exist", strings.TrimSpace(name), rel.Name)
			}
			c.Key = append(c.Key, i)
		}
		return nil
	}
	for _, k := range rel.Key {
		i := c.column(rel.Columns[k].Name)
		if rel.Columns[k].Hidden || i < 0 {
			c.Key = nil
			break
		}
		c.Key = append(c.Key, i)
	}
	if len(c.Key) == 0 {
		return invalid("type = 'upsert' needs a primary key: the sink's query has no key among its columns").
			WithHint("Add the option primary_key = 'col, ...' naming the target table's primary key.")
	}
	return nil
}

// column returns the index in c.Columns of the column named name, or -1.
func (c *Config) column(name string) int {
	for i, col := range c.Columns {
		if col.Name == name {
			return i
		}
	}
	return -1
}

// NewProgressID returns the progress key of a new sink over rel: its
// database, name and id, and a random suffix, so that a sink of a new data
// directory with the same name and id does not take the progress of an old
// one for its own. The engine stores it in the sink's options.
func NewProgressID(rel *catalog.Relation) string {
	return fmt.Sprintf("streamsql-sink-%s-%s-%d-%08x", rel.Database, rel.Name, rel.ID, rand.Uint32())
}

// addr is the server's address, for errors.
func (c *Config) addr() string { return net.JoinHostPort(c.Host, c.Port) }

// connString returns the server's connection string.
func (c *Config) connString() string {
	u := url.URL{Scheme: "postgres", User: url.UserPassword(c.User, c.Password), Host: c.addr(), Path: "/" + c.Database}
	q := url.Values{"sslmode": {"prefer"}, "connect_timeout": {"10"}, "timezone": {"UTC"}, "datestyle": {"ISO"}}
	u.RawQuery = q.Encode()
	return u.String()
}

func invalid(format string, args ...any) *sqlerr.Error {
	return sqlerr.New(sqlerr.InvalidParameterValue, format, args...)
}
