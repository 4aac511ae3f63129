package kafka

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/streamsql/streamsql/types"
)

// avroDecoder decodes ENCODE AVRO messages in Confluent's wire format: a
// zero byte, the writer schema's id in the schema registry (4 bytes, big
// endian), then the Avro binary record. The record's fields are matched
// to the columns by name; columns without a field are NULL. Schemas are
// fetched from the registry once per id.
type avroDecoder struct {
	cols   []Column
	byName map[string]int
	reg    *registry
	rec    map[string]any
}

func newAvroDecoder(cols []Column, reg *registry) *avroDecoder {
	d := &avroDecoder{cols: cols, byName: map[string]int{}, reg: reg}
	for i, c := range cols {
		d.byName[c.Name] = i
	}
	return d
}

func (d *avroDecoder) decode(value []byte, row []types.Datum) error {
	if len(value) < 5 || value[0] != 0 {
		return fmt.Errorf("not in Confluent's Avro wire format (magic byte 0, schema id, record)")
	}
	id := int32(binary.BigEndian.Uint32(value[1:5]))
	s, err := d.reg.schema(id)
	if err != nil {
		return err
	}
	rs, ok := s.(*avro.RecordSchema)
	if !ok {
		return fmt.Errorf("schema %d is not an Avro record", id)
	}
	clear(d.rec)
	if d.rec == nil {
		d.rec = map[string]any{}
	}
	if err := avro.Unmarshal(s, value[5:], &d.rec); err != nil {
		return fmt.Errorf("avro: %v", err)
	}
	for i := range row {
		row[i] = types.Null
	}
	for _, f := range rs.Fields() {
		i, ok := d.byName[f.Name()]
		if !ok {
			i, ok = d.byName[strings.ToLower(f.Name())]
		}
		if !ok {
			continue
		}
		v := d.rec[f.Name()]
		if _, union := f.Type().(*avro.UnionSchema); union {
			if m, ok := v.(map[string]any); ok && len(m) == 1 {
				for _, x := range m {
					v = x
				}
			}
		}
		if row[i], err = avroDatum(d.cols[i], v); err != nil {
			return err
		}
	}
	return nil
}

// avroDatum converts a decoded Avro value to column c's type.
func avroDatum(c Column, v any) (types.Datum, error) {
	var text string
	switch v := v.(type) {
	case nil:
		return types.Null, nil
	case bool:
		if c.Type.Kind == types.Bool {
			return types.DBool(v), nil
		}
		text = fmt.Sprint(v)
	case int, int32, int64:
		n := toInt64(v)
		switch c.Type.Kind {
		case types.Int16, types.Int32, types.Int64:
			return types.ParseText(c.Type, fmt.Sprint(n)) // range checked
		case types.Float32, types.Float64:
			return types.DFloat(float64(n)), nil
		}
		text = fmt.Sprint(n)
	case float32, float64:
		f := toFloat64(v)
		if c.Type.Kind == types.Float32 || c.Type.Kind == types.Float64 {
			return types.DFloat(f), nil
		}
		text = fmt.Sprint(f)
	case string:
		text = v
	case []byte:
		if c.Type.Kind == types.Bytea {
			return types.DBytes(string(v)), nil
		}
		text = string(v)
	case time.Time:
		switch c.Type.Kind {
		case types.Timestamp, types.TimestampTZ:
			return types.DInt(v.UnixMicro()), nil
		case types.Date:
			return types.DInt(v.Unix() / 86400), nil
		}
		text = v.UTC().Format(time.RFC3339Nano)
	case *big.Rat:
		text = v.FloatString(int(max(c.Type.Scale, 10)))
	default:
		return types.Null, fmt.Errorf("column %s: Avro value of type %T", c.Name, v)
	}
	d, err := types.ParseText(c.Type, text)
	if err != nil {
		return types.Null, fmt.Errorf("column %s: %v", c.Name, err)
	}
	return d, nil
}

func toInt64(v any) int64 {
	switch v := v.(type) {
	case int:
		return int64(v)
	case int32:
		return int64(v)
	}
	return v.(int64)
}

func toFloat64(v any) float64 {
	if f, ok := v.(float32); ok {
		return float64(f)
	}
	return v.(float64)
}

// registry is a Confluent schema registry client that caches schemas by
// id. It is safe for concurrent use.
type registry struct {
	url    string
	client *http.Client
	mu     sync.Mutex
	byID   map[int32]avro.Schema
}

func newRegistry(url string) *registry {
	return &registry{url: strings.TrimRight(url, "/"), client: &http.Client{Timeout: 10 * time.Second}, byID: map[int32]avro.Schema{}}
}

// schema returns the schema of id, fetching it if needed.
func (r *registry) schema(id int32) (avro.Schema, error) {
	r.mu.Lock()
	s, ok := r.byID[id]
	r.mu.Unlock()
	if ok {
		return s, nil
	}
	resp, err := r.client.Get(fmt.Sprintf("%s/schemas/ids/%d", r.url, id))
	if err != nil {
		return nil, fmt.Errorf("schema registry: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("schema registry: schema %d: %s", id, resp.Status)
	}
	var body struct {
		Schema string `json:"schema"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, fmt.Errorf("schema registry: schema %d: %v", id, err)
	}
	if s, err = avro.Parse(body.Schema); err != nil {
		return nil, fmt.Errorf("schema registry: schema %d: %v", id, err)
	}
	r.mu.Lock()
	r.byID[id] = s
	r.mu.Unlock()
	return s, nil
}
