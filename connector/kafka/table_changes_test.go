package kafka

import (
	"fmt"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/types"
	"github.com/twmb/franz-go/pkg/kgo"
)

// changeDecoder returns a decoder of FORMAT format ENCODE JSON messages for
// columns id int, v text (and k bytea, INCLUDE key AS k, if keyed on k).
func changeDecoder(t *testing.T, format string, onKey bool) *ChangeDecoder {
	t.Helper()
	opts := map[string]string{"connector": "kafka", "topic": "t", "properties.bootstrap.server": "b:9092", "format": format, "encode": "json"}
	cols := []Column{{Name: "id", Type: types.Int32T}, {Name: "v", Type: types.TextT}}
	key := []int{0}
	if onKey {
		opts["include.k"] = "key"
		cols = append(cols, Column{Name: "k", Type: types.ByteaT})
		key = []int{2}
	}
	o, err := ParseTableOptions(opts)
	if err != nil {
		t.Fatal(err)
	}
	d, err := NewChangeDecoder(o, cols, key)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// show renders a change as kind, old and new rows.
func show(ch Change) string {
	row := func(r []types.Datum) string {
		if r == nil {
			return "-"
		}
		var s []string
		for _, d := range r {
			if d.Null {
				s = append(s, "null")
			} else if d.S != "" {
				s = append(s, d.S)
			} else {
				s = append(s, fmt.Sprint(d.I))
			}
		}
		return strings.Join(s, ",")
	}
	return fmt.Sprintf("%s %s %s", []string{"none", "upsert", "update", "delete"}[ch.Kind], row(ch.Old), row(ch.Row))
}

func TestChangeDecoder(t *testing.T) {
	for _, c := range []struct {
		format     string
		onKey      bool
		key, value string // "<null>": none
		want       string // "error: ..." for an error
	}{
		{"plain", false, "<null>", `{"id": 1, "v": "a"}`, "upsert - 1,a"},
		{"plain", false, "<null>", `{"v": "a"}`, "error: key column id is null"},
		{"upsert", true, "a", `{"id": 1, "v": "x"}`, "upsert - 1,x,a"},
		{"upsert", true, "a", "<null>", "delete null,null,a -"},
		{"upsert", true, "<null>", `{"id": 1}`, "error: the message has no key"},
		{"upsert", false, `{"id": 2}`, `{"id": 1, "v": "x"}`, "upsert - 2,x"},
		{"upsert", false, `7`, `{"v": "x"}`, "upsert - 7,x"},
		{"upsert", false, `"8"`, "<null>", "delete 8,null -"},
		{"upsert", false, `{"v": "no id"}`, "<null>", "error: key column id is null"},
		{"debezium", false, "<null>", `{"before": null, "after": {"id": 1, "v": "a"}, "op": "c"}`, "upsert - 1,a"},
		{"debezium", false, "<null>", `{"schema": {}, "payload": {"after": {"id": 1, "v": "a"}, "op": "r"}}`, "upsert - 1,a"},
		{"debezium", false, "<null>", `{"before": {"id": 1}, "after": {"id": 2, "v": "b"}, "op": "u"}`, "update 1,null 2,b"},
		{"debezium", false, "<null>", `{"before": null, "after": {"id": 2, "v": "b"}, "op": "u"}`, "update - 2,b"},
		{"debezium", false, "<null>", `{"before": {"id": 3, "v": "c"}, "after": null, "op": "d"}`, "delete 3,c -"},
		{"debezium", false, "<null>", "<null>", "none - -"},
		{"debezium", false, "<null>", `{"before": null, "after": null, "op": "d"}`, `error: Debezium op "d" without before`},
		{"debezium", false, "<null>", `{"after": {"id": 1}, "op": "t"}`, `error: unknown Debezium op "t"`},
		{"debezium", false, "<null>", `[1]`, "error: not a Debezium event"},
	} {
		r := &kgo.Record{}
		if c.key != "<null>" {
			r.Key = []byte(c.key)
		}
		if c.value != "<null>" {
			r.Value = []byte(c.value)
		}
		ch, err := changeDecoder(t, c.format, c.onKey).Decode(r)
		got := show(ch)
		if err != nil {
			got = "error: " + err.Error()
		}
		if !strings.HasPrefix(got, c.want) {
			t.Errorf("%s key %s value %s: got %q, want %q", c.format, c.key, c.value, got, c.want)
		}
	}
}

// TestChangeDecoderNeedsKey: UPSERT and DEBEZIUM need a key; UPSERT's key
// is the message key, not another INCLUDE column.
func TestChangeDecoderNeedsKey(t *testing.T) {
	cols := []Column{{Name: "id", Type: types.Int32T}, {Name: "h", Type: types.ByteaT}}
	for _, c := range []struct {
		format string
		key    []int
		want   string
	}{
		{"upsert", nil, "needs a PRIMARY KEY"},
		{"debezium", nil, "needs a PRIMARY KEY"},
		{"upsert", []int{1}, "INCLUDE column other than the message key"},
	} {
		o, err := ParseTableOptions(map[string]string{"connector": "kafka", "topic": "t", "properties.bootstrap.server": "b:9092",
			"format": c.format, "encode": "json", "include.h": "header:x"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := NewChangeDecoder(o, cols, c.key); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s key %v: got %v, want %q", c.format, c.key, err, c.want)
		}
	}
}
