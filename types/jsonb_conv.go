package types

import "strings"

// ToJSON converts a value of type t to jsonb, as to_jsonb does.
func ToJSON(t T, d Datum) JSON {
	if d.Null {
		return JSONNullValue()
	}
	switch t.Kind {
	case JSONB:
		return MustParseJSON(d.S)
	case Bool:
		return JSONBoolValue(d.Bool())
	case Text, Unknown:
		return JSONStr(d.S)
	case Int16, Int32, Int64, Numeric:
		return JSONNum(canonicalJSONNumber(string(AppendText(nil, t, d))))
	case Float32, Float64:
		s := string(AppendText(nil, t, d))
		if strings.ContainsAny(s, "NI") { // NaN, Infinity, -Infinity
			return JSONStr(s)
		}
		return JSONNum(canonicalJSONNumber(s))
	case Timestamp, TimestampTZ:
		s := strings.Replace(string(AppendText(nil, t, d)), " ", "T", 1)
		if t.Kind == TimestampTZ && len(s) > 3 && (s[len(s)-3] == '+' || s[len(s)-3] == '-') {
			s += ":00"
		}
		return JSONStr(s)
	case Array:
		et := t.ElemT()
		elems := make([]JSON, len(d.Arr))
		for i, e := range d.Arr {
			elems[i] = ToJSON(et, e)
		}
		return JSONArrayOf(elems)
	}
	return JSONStr(string(AppendText(nil, t, d)))
}

// canonicalJSONNumber canonicalizes number text that a number type printed.
func canonicalJSONNumber(s string) string {
	v, err := ParseJSON(s)
	if err != nil || v.Kind != JSONNumber {
		return s
	}
	return v.Str
}
