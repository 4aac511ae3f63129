package kafka

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/streamsql/streamsql/connector/textdec"
	"github.com/streamsql/streamsql/types"
	"github.com/twmb/franz-go/pkg/kgo"
)

// ChangeKind is what one message does to a table fed by Kafka.
type ChangeKind uint8

const (
	// ChangeNone: the message changes nothing (a Debezium tombstone).
	ChangeNone ChangeKind = iota
	// ChangeUpsert: Row replaces the row with its key, or is inserted (a
	// table without a key appends it).
	ChangeUpsert
	// ChangeUpdate: Row replaces the row whose key is in Old (Old nil: the
	// key is Row's).
	ChangeUpdate
	// ChangeDelete: the row whose key is in Old goes.
	ChangeDelete
)

// Change is one message decoded for a table. Rows are in the order of the
// decoder's columns; Old holds (at least) the key columns.
type Change struct {
	Kind     ChangeKind
	Old, Row []types.Datum
}

// ChangeDecoder decodes the messages of a table fed by Kafka into changes,
// by the table's FORMAT:
//
//   - PLAIN: the value is a row (any ENCODE), upserted by its key.
//   - UPSERT (ENCODE JSON): the message key is the primary key and the
//     value the row; a null value (a tombstone) deletes the key. With
//     PRIMARY KEY (k) on INCLUDE key AS k the key is the message key's
//     bytes; else the key is a JSON object of the key columns (or, for a
//     one-column key, a JSON scalar), which wins over the value's.
//   - DEBEZIUM (ENCODE JSON): the value is an envelope {before, after, op}
//     (with or without the {schema, payload} wrapper): op c and r upsert
//     after, u replaces before's key with after, d deletes before's key;
//     tombstones change nothing.
//
// INCLUDE columns are filled from the message. A row whose key has a NULL
// column is an error. A ChangeDecoder is not safe for concurrent use; the
// rows of a Change are its own.
type ChangeDecoder struct {
	o        *SourceOptions
	cols     []Column
	key      []int
	includes []Include // per column; Kind 0 for payload columns
	payload  []int     // payload column i is column payload[i]
	dec      decoder
	// keyCol is the INCLUDE key column that is the whole primary key (UPSERT
	// keyed on the message key's bytes), or -1; keyDec decodes a JSON
	// message key into the key columns otherwise.
	keyCol  int
	keyDec  *textdec.JSON
	payRow  []types.Datum
	keyRow  []types.Datum
	scratch []byte
}

// NewChangeDecoder returns a decoder of o's messages into changes of a
// table with columns cols and primary key key (indexes into cols; empty:
// the table has no key). It fails if the format needs a key the table does
// not have, or a column cannot be decoded.
func NewChangeDecoder(o *SourceOptions, cols []Column, key []int) (*ChangeDecoder, error) {
	d := &ChangeDecoder{o: o, cols: cols, key: key, includes: make([]Include, len(cols)), keyCol: -1}
	var payload []Column
	for i, c := range cols {
		if inc, ok := o.Includes[c.Name]; ok {
			if err := checkIncludeType(c, inc); err != nil {
				return nil, err
			}
			d.includes[i] = inc
			continue
		}
		d.payload = append(d.payload, i)
		payload = append(payload, c)
	}
	d.payRow = make([]types.Datum, len(payload))
	if o.Format != FormatPlain && len(key) == 0 {
		return nil, fmt.Errorf("FORMAT %s needs a PRIMARY KEY", o.Format)
	}
	switch o.Encode {
	case "json":
		d.dec = jsonDecoder{textdec.NewJSON(payload)}
	case "csv":
		d.dec = csvDecoder{textdec.NewCSV(payload, o.Delimiter), !o.WithoutHeader}
	case "avro":
		d.dec = newAvroDecoder(payload, newRegistry(o.SchemaRegistry))
	default:
		return nil, fmt.Errorf("kafka: no decoder for ENCODE %s", o.Encode)
	}
	if o.Format == FormatUpsert {
		if err := d.upsertKey(); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// upsertKey sets up how an UPSERT table reads its key from the message key.
func (d *ChangeDecoder) upsertKey() error {
	if len(d.key) == 1 && d.includes[d.key[0]].Kind == IncludeKey {
		d.keyCol = d.key[0]
		return nil
	}
	var keyCols []Column
	for _, k := range d.key {
		if d.includes[k].Kind != 0 {
			return fmt.Errorf("FORMAT UPSERT: key column %s is an INCLUDE column other than the message key", d.cols[k].Name)
		}
		keyCols = append(keyCols, d.cols[k])
	}
	d.keyDec = textdec.NewJSON(keyCols)
	d.keyRow = make([]types.Datum, len(keyCols))
	return nil
}

// Decode decodes one message.
func (d *ChangeDecoder) Decode(r *kgo.Record) (Change, error) {
	switch d.o.Format {
	case FormatUpsert:
		return d.decodeUpsert(r)
	case FormatDebezium:
		return d.decodeDebezium(r)
	}
	row, err := d.row(r.Value, r)
	if err != nil {
		return Change{}, err
	}
	return Change{Kind: ChangeUpsert, Row: row}, d.checkKey(row)
}

// row decodes a value into a new row with the message's INCLUDE columns.
func (d *ChangeDecoder) row(value []byte, r *kgo.Record) ([]types.Datum, error) {
	if err := d.dec.decode(value, d.payRow); err != nil {
		return nil, err
	}
	row := make([]types.Datum, len(d.cols))
	for i, c := range d.payload {
		row[c] = d.payRow[i]
	}
	for i, inc := range d.includes {
		if inc.Kind != 0 {
			row[i] = d.include(inc, r)
		}
	}
	return row, nil
}

// include returns the value of an INCLUDE column for r.
func (d *ChangeDecoder) include(inc Include, r *kgo.Record) types.Datum {
	switch inc.Kind {
	case IncludeKey:
		if r.Key != nil {
			return types.DBytes(string(r.Key))
		}
	case IncludePartition:
		return types.DText(strconv.Itoa(int(r.Partition)))
	case IncludeOffset:
		return types.DText(strconv.FormatInt(r.Offset, 10))
	case IncludeTimestamp:
		return types.DInt(r.Timestamp.UnixMicro())
	case IncludeHeader:
		for _, h := range r.Headers {
			if h.Key == inc.Header {
				return types.DBytes(string(h.Value))
			}
		}
	}
	return types.Null
}

var errNoKey = errors.New("the message has no key (FORMAT UPSERT keys rows on the message key)")

// decodeUpsert decodes an UPSERT message: a tombstone deletes its key.
func (d *ChangeDecoder) decodeUpsert(r *kgo.Record) (Change, error) {
	if r.Key == nil {
		return Change{}, errNoKey
	}
	var row []types.Datum
	if r.Value != nil {
		var err error
		if row, err = d.row(r.Value, r); err != nil {
			return Change{}, err
		}
	} else {
		row = make([]types.Datum, len(d.cols))
		for i := range row {
			row[i] = types.Null
		}
	}
	if d.keyCol >= 0 {
		row[d.keyCol] = types.DBytes(string(r.Key))
	} else if err := d.messageKey(r.Key, row); err != nil {
		return Change{}, err
	}
	if err := d.checkKey(row); err != nil {
		return Change{}, err
	}
	if r.Value == nil {
		return Change{Kind: ChangeDelete, Old: row}, nil
	}
	return Change{Kind: ChangeUpsert, Row: row}, nil
}

// messageKey decodes a JSON message key into row's key columns.
func (d *ChangeDecoder) messageKey(key []byte, row []types.Datum) error {
	key = bytes.TrimSpace(key)
	if len(key) > 0 && key[0] == '{' {
		if err := d.keyDec.Decode(key, d.keyRow); err != nil {
			return fmt.Errorf("message key: %v", err)
		}
	} else {
		if len(d.key) != 1 || len(key) == 0 {
			return fmt.Errorf("message key %q is not a JSON object of the key columns", key)
		}
		if err := d.keyDec.DecodeScalar(key, 0, d.keyRow); err != nil {
			return fmt.Errorf("message key: %v", err)
		}
	}
	for i, k := range d.key {
		row[k] = d.keyRow[i]
	}
	return nil
}

// checkKey fails if a key column of row is NULL.
func (d *ChangeDecoder) checkKey(row []types.Datum) error {
	for _, k := range d.key {
		if row[k].Null {
			return fmt.Errorf("key column %s is null", d.cols[k].Name)
		}
	}
	return nil
}

// debeziumEnvelope is a Debezium change event, or its {schema, payload}
// wrapper.
type debeziumEnvelope struct {
	Before  json.RawMessage `json:"before"`
	After   json.RawMessage `json:"after"`
	Op      string          `json:"op"`
	Payload json.RawMessage `json:"payload"`
}

// decodeDebezium decodes a Debezium change event.
func (d *ChangeDecoder) decodeDebezium(r *kgo.Record) (Change, error) {
	if r.Value == nil {
		return Change{Kind: ChangeNone}, nil
	}
	var env debeziumEnvelope
	if err := json.Unmarshal(r.Value, &env); err != nil {
		return Change{}, fmt.Errorf("not a Debezium event: %v", err)
	}
	if env.Op == "" && isObject(env.Payload) {
		if err := json.Unmarshal(env.Payload, &env); err != nil {
			return Change{}, fmt.Errorf("not a Debezium event: %v", err)
		}
	}
	image := func(raw json.RawMessage, name string) ([]types.Datum, error) {
		if !isObject(raw) {
			return nil, fmt.Errorf("Debezium op %q without %s", env.Op, name)
		}
		row, err := d.row(raw, r)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		return row, d.checkKey(row)
	}
	switch env.Op {
	case "c", "r":
		after, err := image(env.After, "after")
		return Change{Kind: ChangeUpsert, Row: after}, err
	case "u":
		after, err := image(env.After, "after")
		if err != nil {
			return Change{}, err
		}
		var before []types.Datum
		if isObject(env.Before) {
			if before, err = image(env.Before, "before"); err != nil {
				return Change{}, err
			}
		}
		return Change{Kind: ChangeUpdate, Old: before, Row: after}, nil
	case "d":
		before, err := image(env.Before, "before")
		return Change{Kind: ChangeDelete, Old: before}, err
	case "":
		return Change{}, errors.New("not a Debezium event: no op")
	default:
		return Change{}, fmt.Errorf("unknown Debezium op %q", env.Op)
	}
}

// isObject reports whether raw is a JSON object.
func isObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}
