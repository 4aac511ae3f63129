// Package kafka is streamsql's Kafka connector: a source that reads a
// topic's partitions (the splits of the source) from committed offsets and
// decodes their messages into Arrow batches.
package kafka

import (
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/streamsql/streamsql/sqlerr"
)

// Formats of a Kafka table's messages besides FORMAT PLAIN (which only
// inserts).
const (
	FormatPlain    = "plain"
	FormatUpsert   = "upsert"
	FormatDebezium = "debezium"
)

// Startup modes: where a reader with no committed offsets starts.
const (
	StartEarliest  = "earliest"
	StartLatest    = "latest"
	StartTimestamp = "timestamp"
)

// SourceOptions are a Kafka source's WITH and FORMAT options, checked.
type SourceOptions struct {
	Topic   string
	Brokers []string
	// Startup is where partitions without a committed offset start when the
	// reader first runs (StartTimestamp: the first message at or after
	// StartMillis). Partitions found later start at their beginning.
	Startup     string
	StartMillis int64
	// Format and Encode are the FORMAT and ENCODE of the messages.
	Format, Encode string
	// FailOnError: a message that does not decode fails the source instead
	// of being skipped and counted (error.policy = 'fail').
	FailOnError bool
	// Delimiter and WithoutHeader are ENCODE CSV's options.
	Delimiter     byte
	WithoutHeader bool
	// SchemaRegistry is ENCODE AVRO's schema.registry URL.
	SchemaRegistry string
	// Discovery is how often the reader looks for new partitions.
	Discovery time.Duration
	// Security is how the reader connects to the brokers.
	Security Security
	// Includes map a column name to the message metadata it holds
	// (INCLUDE ... AS column).
	Includes map[string]Include
}

// Include is message metadata that an INCLUDE column holds.
type Include struct {
	Kind   IncludeKind
	Header string // the header's name, for IncludeHeader
}

// IncludeKind is the kind of an INCLUDE column.
type IncludeKind uint8

const (
	IncludeKey IncludeKind = iota + 1
	IncludePartition
	IncludeOffset
	IncludeTimestamp
	IncludeHeader
)

// includeKinds are the INCLUDE kinds by name.
var includeKinds = map[string]IncludeKind{
	"key": IncludeKey, "partition": IncludePartition, "offset": IncludeOffset,
	"timestamp": IncludeTimestamp, "header": IncludeHeader,
}

// IncludeOption is the option under which the SQL layer records INCLUDE
// kind ['header'] AS col: "include.<col>" = "kind" or "header:<name>".
const IncludeOption = "include."

// ParseInclude parses the value of an include option.
func ParseInclude(v string) (Include, bool) {
	kind, header, _ := strings.Cut(v, ":")
	k, ok := includeKinds[kind]
	if !ok || (k == IncludeHeader) != (header != "") {
		return Include{}, false
	}
	return Include{Kind: k, Header: header}, true
}

// sourceOptionNames are the options a Kafka source accepts besides
// include.* (the FORMAT clause adds format, encode and encode.*).
var sourceOptionNames = map[string]bool{
	"connector": true, "topic": true, "properties.bootstrap.server": true,
	"scan.startup.mode": true, "scan.startup.timestamp.millis": true,
	"error.policy": true, "partition.discovery.interval.ms": true,
	"format": true, "encode": true,
	"encode.delimiter": true, "encode.without_header": true, "encode.schema.registry": true,
}

// ParseSourceOptions checks a Kafka source's options. Errors are 22023
// (invalid parameter value) or 0A000 (a format streamsql does not read),
// and name the option.
func ParseSourceOptions(opts map[string]string) (*SourceOptions, error) {
	return parseOptions(opts, false)
}

// ParseTableOptions checks the options of a table fed by Kafka (CREATE
// TABLE ... WITH (connector = 'kafka')): a source's, and FORMAT UPSERT and
// DEBEZIUM with ENCODE JSON besides PLAIN.
func ParseTableOptions(opts map[string]string) (*SourceOptions, error) {
	return parseOptions(opts, true)
}

func parseOptions(opts map[string]string, table bool) (*SourceOptions, error) {
	var unknown []string
	for k := range opts {
		if !sourceOptionNames[k] && !IsSecurityOption(k) && !strings.HasPrefix(k, IncludeOption) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, invalidValue("unknown Kafka source option \"%s\"", unknown[0]).
			WithHint("The options are topic, properties.bootstrap.server, scan.startup.mode, scan.startup.timestamp.millis, error.policy, partition.discovery.interval.ms, and properties.security.protocol, properties.sasl.* and properties.ssl.*.")
	}
	o := &SourceOptions{Topic: opts["topic"], Startup: StartEarliest, Delimiter: ',', Discovery: 5 * time.Second,
		Includes: map[string]Include{}}
	if o.Topic == "" {
		return nil, invalidValue("a Kafka source needs the option topic")
	}
	for _, b := range strings.Split(opts["properties.bootstrap.server"], ",") {
		if b = strings.TrimSpace(b); b != "" {
			o.Brokers = append(o.Brokers, b)
		}
	}
	if len(o.Brokers) == 0 {
		return nil, invalidValue("a Kafka source needs the option properties.bootstrap.server (host:port[,host:port...])")
	}
	var err error
	if o.Security, err = ParseSecurity(opts); err != nil {
		return nil, err
	}
	if err := o.parseStartup(opts); err != nil {
		return nil, err
	}
	switch p := opts["error.policy"]; p {
	case "", "skip":
	case "fail":
		o.FailOnError = true
	default:
		return nil, invalidValue("error.policy must be 'skip' or 'fail', not '%s'", p)
	}
	if v, ok := opts["partition.discovery.interval.ms"]; ok {
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil || ms <= 0 {
			return nil, invalidValue("partition.discovery.interval.ms must be a positive number of milliseconds, not '%s'", v)
		}
		o.Discovery = time.Duration(ms) * time.Millisecond
	}
	if err := o.parseFormat(opts, table); err != nil {
		return nil, err
	}
	for k, v := range opts {
		if col, ok := strings.CutPrefix(k, IncludeOption); ok {
			inc, ok := ParseInclude(v)
			if !ok {
				return nil, invalidValue("INCLUDE %s is not a Kafka message field (key, partition, offset, timestamp, header 'name')", v)
			}
			o.Includes[col] = inc
		}
	}
	return o, nil
}

// parseStartup reads scan.startup.mode and scan.startup.timestamp.millis
// (which wins, as in RisingWave).
func (o *SourceOptions) parseStartup(opts map[string]string) error {
	switch m := opts["scan.startup.mode"]; m {
	case "", StartEarliest:
	case StartLatest:
		o.Startup = StartLatest
	default:
		return invalidValue("scan.startup.mode must be 'earliest' or 'latest', not '%s'", m)
	}
	if v, ok := opts["scan.startup.timestamp.millis"]; ok {
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil || ms < 0 {
			return invalidValue("scan.startup.timestamp.millis must be milliseconds since the Unix epoch, not '%s'", v)
		}
		o.Startup, o.StartMillis = StartTimestamp, ms
	}
	return nil
}

// parseFormat reads FORMAT ... ENCODE ... and the encoding's options.
func (o *SourceOptions) parseFormat(opts map[string]string, table bool) error {
	o.Format, o.Encode = opts["format"], opts["encode"]
	if o.Format == "" {
		return invalidValue("a Kafka source needs FORMAT ... ENCODE ...: write FORMAT PLAIN ENCODE JSON")
	}
	switch o.Format {
	case FormatPlain:
		switch o.Encode {
		case "json", "csv", "avro":
		default:
			return sqlerr.Unsupported("FORMAT PLAIN ENCODE %s (a Kafka source reads ENCODE JSON, CSV and AVRO)", strings.ToUpper(o.Encode))
		}
	case FormatUpsert, FormatDebezium:
		if !table {
			return sqlerr.Unsupported("FORMAT %s on a Kafka source: a source only appends, so its updates and deletes need a table (CREATE TABLE ... (..., PRIMARY KEY (...)) WITH (connector = 'kafka', ...) FORMAT %s ENCODE JSON)",
				strings.ToUpper(o.Format), strings.ToUpper(o.Format))
		}
		if o.Encode != "json" {
			return sqlerr.Unsupported("FORMAT %s ENCODE %s (a Kafka table reads FORMAT %s ENCODE JSON)", strings.ToUpper(o.Format), strings.ToUpper(o.Encode), strings.ToUpper(o.Format))
		}
	default:
		return sqlerr.Unsupported("FORMAT %s (a Kafka source reads FORMAT PLAIN)", strings.ToUpper(o.Format))
	}
	if d, ok := opts["encode.delimiter"]; ok {
		if o.Encode != "csv" {
			return invalidValue("delimiter is an option of ENCODE CSV")
		}
		if len(d) != 1 {
			return invalidValue("the CSV delimiter must be a single one-byte character, not '%s'", d)
		}
		o.Delimiter = d[0]
	}
	if v, ok := opts["encode.without_header"]; ok {
		if o.Encode != "csv" {
			return invalidValue("without_header is an option of ENCODE CSV")
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			return invalidValue("without_header must be 'true' or 'false', not '%s'", v)
		}
		o.WithoutHeader = b
	}
	o.SchemaRegistry = opts["encode.schema.registry"]
	if o.Encode == "avro" && o.SchemaRegistry == "" {
		return invalidValue("ENCODE AVRO needs the option schema.registry = 'http://host:port'")
	}
	if o.Encode != "avro" && o.SchemaRegistry != "" {
		return invalidValue("schema.registry is an option of ENCODE AVRO")
	}
	return nil
}

func invalidValue(format string, args ...any) *sqlerr.Error {
	return sqlerr.New(sqlerr.InvalidParameterValue, format, args...)
}
