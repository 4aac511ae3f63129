package kafka

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/sqlerr"
)

// Defaults of the sink options.
const (
	// DefaultProgressTopic is the topic where exactly-once sinks record the
	// last epoch they delivered (progress.topic).
	DefaultProgressTopic = "streamsql_sink_progress"
	// DefaultMaxOutboxBytes bounds the committed changes waiting for the
	// broker (sink.outbox.max.bytes).
	DefaultMaxOutboxBytes = 256 << 20
)

// SinkConfig is a Kafka sink's configuration, from its WITH and FORMAT
// options.
type SinkConfig struct {
	// Name is the sink's name, for errors and logs.
	Name    string
	Topic   string
	Brokers []string
	Format  Format
	// PrimaryKey are the columns of the record key (primary_key); Upsert
	// needs them, Plain and Debezium use them if given.
	PrimaryKey []string
	// ForceAppendOnly lets a Plain sink take a view that deletes or updates.
	ForceAppendOnly bool
	// ExactlyOnce delivers each epoch in one Kafka transaction (the default;
	// sink.delivery.guarantee = 'at_least_once' turns it off).
	ExactlyOnce bool
	// TransactionalID is the producer's transactional.id, stable for the
	// sink, and the key of its progress records.
	TransactionalID string
	ProgressTopic   string
	// MaxOutboxBytes bounds the changes of committed epochs not yet
	// delivered; past it the sink fails.
	MaxOutboxBytes int64
	// Security is how the sink connects to the brokers.
	Security Security
}

// sinkOptions are the options a Kafka sink accepts, besides connector.
var sinkOptions = map[string]bool{
	"topic": true, "properties.bootstrap.server": true, "primary_key": true,
	"format": true, "encode": true, "force_append_only": true, "encode.force_append_only": true,
	"sink.delivery.guarantee": true, "properties.transactional.id": true, "progress.topic": true,
	"sink.outbox.max.bytes": true,
}

// ParseSinkConfig checks a Kafka sink's options against the relation it
// writes: its columns and whether it only inserts. Errors carry a SQLSTATE.
func ParseSinkConfig(rel *catalog.Relation) (*SinkConfig, error) {
	opts := rel.Options
	var unknown []string
	for k := range opts {
		if k != "connector" && !sinkOptions[k] && !IsSecurityOption(k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, invalid("unknown option %q for a kafka sink", unknown[0])
	}
	c := &SinkConfig{
		Name:            rel.Name,
		Topic:           opts["topic"],
		Brokers:         splitList(opts["properties.bootstrap.server"]),
		PrimaryKey:      splitList(opts["primary_key"]),
		ExactlyOnce:     true,
		TransactionalID: opts["properties.transactional.id"],
		ProgressTopic:   opts["progress.topic"],
		MaxOutboxBytes:  DefaultMaxOutboxBytes,
	}
	var err error
	if c.Security, err = ParseSecurity(opts); err != nil {
		return nil, err
	}
	if c.Topic == "" {
		return nil, invalid("a kafka sink needs the option topic")
	}
	if len(c.Brokers) == 0 {
		return nil, invalid("a kafka sink needs the option properties.bootstrap.server")
	}
	if c.TransactionalID == "" {
		c.TransactionalID = NewTransactionalID(rel)
	}
	if c.ProgressTopic == "" {
		c.ProgressTopic = DefaultProgressTopic
	}
	switch g := strings.ToLower(opts["sink.delivery.guarantee"]); g {
	case "", "exactly_once":
	case "at_least_once":
		c.ExactlyOnce = false
	default:
		return nil, invalid("sink.delivery.guarantee must be 'exactly_once' or 'at_least_once', not %q", g)
	}
	if s := opts["sink.outbox.max.bytes"]; s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 {
			return nil, invalid("sink.outbox.max.bytes must be a positive number of bytes, not %q", s)
		}
		c.MaxOutboxBytes = n
	}
	force := opts["encode.force_append_only"]
	if force == "" {
		force = opts["force_append_only"]
	}
	switch strings.ToLower(force) {
	case "", "false":
	case "true":
		c.ForceAppendOnly = true
	default:
		return nil, invalid("force_append_only must be 'true' or 'false', not %q", force)
	}
	if err := c.parseFormat(opts["format"], opts["encode"], rel.AppendOnly); err != nil {
		return nil, err
	}
	for _, k := range c.PrimaryKey {
		if columnIndex(rel.Columns, k) < 0 {
			return nil, sqlerr.New(sqlerr.UndefinedColumn, "primary_key column \"%s\" of sink %s does not exist", k, rel.Name)
		}
	}
	return c, nil
}

// NewTransactionalID returns a transactional.id for a new sink over rel:
// its database, name and id, and a random suffix, so that a sink of a new
// data directory with the same name and id does not take the progress of
// an old one for its own. The engine stores it in the sink's options, so
// that it stays the same across restarts.
func NewTransactionalID(rel *catalog.Relation) string {
	return fmt.Sprintf("streamsql-sink-%s-%s-%d-%08x", rel.Database, rel.Name, rel.ID, rand.Uint32())
}

// parseFormat sets c.Format from FORMAT f ENCODE e.
func (c *SinkConfig) parseFormat(format, encode string, appendOnly bool) error {
	if format == "" {
		return invalid("a kafka sink needs FORMAT PLAIN | UPSERT | DEBEZIUM ENCODE JSON")
	}
	if encode != "json" {
		return sqlerr.New(sqlerr.FeatureNotSupported, "ENCODE %s is not supported by the kafka sink", strings.ToUpper(encode)).
			WithHint("Write ENCODE JSON.")
	}
	switch format {
	case "plain":
		c.Format = Plain
		if !appendOnly && !c.ForceAppendOnly {
			return invalid("the sink cannot be append-only: its query deletes or updates rows").
				WithHint("Add force_append_only = 'true' to FORMAT PLAIN ENCODE JSON (...) to drop deletes and write updates as inserts, or use FORMAT UPSERT or FORMAT DEBEZIUM.")
		}
	case "upsert":
		c.Format = Upsert
		if len(c.PrimaryKey) == 0 {
			return invalid("FORMAT UPSERT needs the option primary_key")
		}
	case "debezium":
		c.Format = Debezium
	default:
		return sqlerr.New(sqlerr.FeatureNotSupported, "FORMAT %s is not supported by the kafka sink", strings.ToUpper(format)).
			WithHint("The formats are PLAIN, UPSERT and DEBEZIUM.")
	}
	if c.ForceAppendOnly && c.Format != Plain {
		return invalid("force_append_only applies to FORMAT PLAIN only")
	}
	return nil
}

func invalid(format string, args ...any) *sqlerr.Error {
	return sqlerr.New(sqlerr.InvalidParameterValue, format, args...)
}

// columnIndex returns the index of the visible column named name, or -1.
func columnIndex(cols []catalog.Column, name string) int {
	for i, c := range cols {
		if !c.Hidden && c.Name == name {
			return i
		}
	}
	return -1
}

// splitList splits a comma-separated option value, trimming spaces.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
