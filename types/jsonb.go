package types

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/streamsql/streamsql/sqlerr"
)

// jsonb values.
//
// A jsonb column is an Arrow String column holding each value's canonical
// text: PostgreSQL's jsonb output ({"a": 1, "b": [1, 2]}), with object keys
// sorted as PostgreSQL stores them (shorter keys first, then bytewise),
// duplicate keys removed (the last one wins) and numbers written as
// PostgreSQL's numeric prints them (1e2 is 100, 1.50 stays 1.50). Two jsonb
// values are the same value exactly when their canonical texts are equal,
// except for numbers of equal value and different scale (1.0 and 1), which
// compare equal but are distinct texts. Datum.S holds the canonical text.
//
// JSON is the parsed form, for operations that need the structure.

// JSONKind is the type of a JSON value, in PostgreSQL's jsonb sort order.
type JSONKind uint8

// The JSON kinds. Their order is jsonb's: null < string < number < boolean <
// array < object.
const (
	JSONNull JSONKind = iota
	JSONString
	JSONNumber
	JSONBool
	JSONArray
	JSONObject
)

// String returns the name jsonb_typeof gives the kind.
func (k JSONKind) String() string {
	switch k {
	case JSONNull:
		return "null"
	case JSONString:
		return "string"
	case JSONNumber:
		return "number"
	case JSONBool:
		return "boolean"
	case JSONArray:
		return "array"
	}
	return "object"
}

// JSON is a parsed jsonb value. Objects are canonical: Keys sorted by
// JSONKeyLess without duplicates, Elems[i] the value of Keys[i].
type JSON struct {
	Kind JSONKind
	// Str is a string's value, or a number's canonical numeric text.
	Str   string
	Bool  bool
	Elems []JSON
	Keys  []string
}

// JSONKeyLess is the order of keys in a jsonb object: shorter keys first,
// then bytewise.
func JSONKeyLess(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

// The constructors of JSON values. JSONNum takes canonical numeric text.
func JSONNullValue() JSON           { return JSON{Kind: JSONNull} }
func JSONStr(s string) JSON         { return JSON{Kind: JSONString, Str: s} }
func JSONBoolValue(b bool) JSON     { return JSON{Kind: JSONBool, Bool: b} }
func JSONNum(canonical string) JSON { return JSON{Kind: JSONNumber, Str: canonical} }
func JSONArrayOf(elems []JSON) JSON { return JSON{Kind: JSONArray, Elems: elems} }

// IsContainer reports whether j is an array or an object.
func (j JSON) IsContainer() bool { return j.Kind == JSONArray || j.Kind == JSONObject }

func jsonErr(detail string) error   { return errJSONSyntax.WithDetail(detail) }
func jsonTokenErr(tok string) error { return jsonErr("Token \"" + tok + "\" is invalid.") }

func jsonExpected(what, tok string) error {
	if tok == "" {
		return jsonErr("The input string ended unexpectedly.")
	}
	return jsonErr("Expected " + what + ", but found \"" + tok + "\".")
}

var errJSONSyntax = sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type json")

// Get returns the value of key in an object.
func (j JSON) Get(key string) (JSON, bool) {
	if j.Kind != JSONObject {
		return JSON{}, false
	}
	i, ok := j.find(key)
	if !ok {
		return JSON{}, false
	}
	return j.Elems[i], true
}

// find returns the position of key in an object's keys, or where it would go.
func (j JSON) find(key string) (int, bool) {
	lo, hi := 0, len(j.Keys)
	for lo < hi {
		m := (lo + hi) / 2
		if JSONKeyLess(j.Keys[m], key) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(j.Keys) && j.Keys[lo] == key
}

// Set returns a copy of object j with key set to v (added or replaced).
func (j JSON) Set(key string, v JSON) JSON {
	i, ok := j.find(key)
	keys := append([]string(nil), j.Keys...)
	elems := append([]JSON(nil), j.Elems...)
	if ok {
		elems[i] = v
	} else {
		keys = append(keys[:i], append([]string{key}, keys[i:]...)...)
		elems = append(elems[:i], append([]JSON{v}, elems[i:]...)...)
	}
	return JSON{Kind: JSONObject, Keys: keys, Elems: elems}
}

// Delete returns a copy of object j without key.
func (j JSON) Delete(key string) JSON {
	i, ok := j.find(key)
	if !ok {
		return j
	}
	keys := append(append([]string(nil), j.Keys[:i]...), j.Keys[i+1:]...)
	elems := append(append([]JSON(nil), j.Elems[:i]...), j.Elems[i+1:]...)
	return JSON{Kind: JSONObject, Keys: keys, Elems: elems}
}

// JSONObjectBuilder collects pairs in any order, possibly with duplicate
// keys, into a canonical object (the last value of a key wins).
type JSONObjectBuilder struct {
	keys  []string
	elems []JSON
}

// Add adds a pair.
func (b *JSONObjectBuilder) Add(k string, v JSON) {
	b.keys = append(b.keys, k)
	b.elems = append(b.elems, v)
}

// Finish returns the object.
func (b *JSONObjectBuilder) Finish() JSON {
	return canonicalObject(b.keys, b.elems)
}

func canonicalObject(keys []string, elems []JSON) JSON {
	idx := make([]int, len(keys))
	for i := range idx {
		idx[i] = i
	}
	// A stable sort: equal keys keep their input order, so the last of
	// equal keys is last.
	sortStable(idx, func(a, b int) bool { return JSONKeyLess(keys[a], keys[b]) })
	out := JSON{Kind: JSONObject, Keys: make([]string, 0, len(keys)), Elems: make([]JSON, 0, len(keys))}
	for n, i := range idx {
		if n+1 < len(idx) && keys[idx[n+1]] == keys[i] {
			continue // a later duplicate wins
		}
		out.Keys = append(out.Keys, keys[i])
		out.Elems = append(out.Elems, elems[i])
	}
	return out
}

// ParseJSON parses JSON text with PostgreSQL's json input rules and errors:
// 22P02 "invalid input syntax for type json" with PostgreSQL's DETAIL, 22P05
// for \u0000.
func ParseJSON(s string) (JSON, error) {
	p := jsonParser{s: s}
	tok, err := p.next()
	if err != nil {
		return JSON{}, err
	}
	v, err := p.value(tok)
	if err != nil {
		return JSON{}, err
	}
	tok, err = p.next()
	if err != nil {
		return JSON{}, err
	}
	if tok.kind != tokEnd {
		return JSON{}, jsonExpected("end of input", tok.text)
	}
	return v, nil
}

// ParseJSONB parses JSON text into its canonical jsonb text.
func ParseJSONB(s string) (string, error) {
	v, err := ParseJSON(s)
	if err != nil {
		return "", err
	}
	return string(AppendJSON(nil, v)), nil
}

// MustParseJSON parses canonical jsonb text, which is valid by construction.
func MustParseJSON(s string) JSON {
	v, err := ParseJSON(s)
	if err != nil {
		panic("types: corrupt jsonb value " + strconv.Quote(s))
	}
	return v
}

type tokKind uint8

const (
	tokEnd tokKind = iota
	tokPunct
	tokString
	tokNumber
	tokTrue
	tokFalse
	tokNull
)

type jsonToken struct {
	kind tokKind
	text string // the token as written ("" at the end)
	str  string // a string token's value
}

type jsonParser struct {
	s     string
	i     int
	depth int
}

const maxJSONDepth = 6400

func (p *jsonParser) value(t jsonToken) (JSON, error) {
	switch t.kind {
	case tokString:
		return JSONStr(t.str), nil
	case tokNumber:
		return JSONNum(canonicalNumber(t.text)), nil
	case tokTrue:
		return JSONBoolValue(true), nil
	case tokFalse:
		return JSONBoolValue(false), nil
	case tokNull:
		return JSONNullValue(), nil
	case tokPunct:
		switch t.text {
		case "[":
			return p.array()
		case "{":
			return p.object()
		}
	}
	return JSON{}, jsonExpected("JSON value", t.text)
}

func (p *jsonParser) enter() error {
	p.depth++
	if p.depth > maxJSONDepth {
		return sqlerr.New("54001", "stack depth limit exceeded")
	}
	return nil
}

func (p *jsonParser) array() (JSON, error) {
	if err := p.enter(); err != nil {
		return JSON{}, err
	}
	defer func() { p.depth-- }()
	out := JSON{Kind: JSONArray}
	t, err := p.next()
	if err != nil {
		return JSON{}, err
	}
	if t.kind == tokPunct && t.text == "]" {
		return out, nil
	}
	for {
		v, err := p.value(t)
		if err != nil {
			return JSON{}, err
		}
		out.Elems = append(out.Elems, v)
		if t, err = p.next(); err != nil {
			return JSON{}, err
		}
		if t.kind == tokPunct && t.text == "]" {
			return out, nil
		}
		if t.kind != tokPunct || t.text != "," {
			return JSON{}, jsonExpected(`"," or "]"`, t.text)
		}
		if t, err = p.next(); err != nil {
			return JSON{}, err
		}
	}
}

func (p *jsonParser) object() (JSON, error) {
	if err := p.enter(); err != nil {
		return JSON{}, err
	}
	defer func() { p.depth-- }()
	var keys []string
	var elems []JSON
	t, err := p.next()
	if err != nil {
		return JSON{}, err
	}
	if t.kind == tokPunct && t.text == "}" {
		return JSON{Kind: JSONObject}, nil
	}
	if t.kind != tokString {
		return JSON{}, jsonExpected(`string or "}"`, t.text)
	}
	for {
		key := t.str
		if t, err = p.next(); err != nil {
			return JSON{}, err
		}
		if t.kind != tokPunct || t.text != ":" {
			return JSON{}, jsonExpected(`":"`, t.text)
		}
		if t, err = p.next(); err != nil {
			return JSON{}, err
		}
		v, err := p.value(t)
		if err != nil {
			return JSON{}, err
		}
		keys, elems = append(keys, key), append(elems, v)
		if t, err = p.next(); err != nil {
			return JSON{}, err
		}
		if t.kind == tokPunct && t.text == "}" {
			return canonicalObject(keys, elems), nil
		}
		if t.kind != tokPunct || t.text != "," {
			return JSON{}, jsonExpected(`"," or "}"`, t.text)
		}
		if t, err = p.next(); err != nil {
			return JSON{}, err
		}
		if t.kind != tokString {
			return JSON{}, jsonExpected("string", t.text)
		}
	}
}

func jsonAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c >= 0x80
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// next lexes the next token as PostgreSQL's json_lex does.
func (p *jsonParser) next() (jsonToken, error) {
	s := p.s
	for p.i < len(s) && (s[p.i] == ' ' || s[p.i] == '\t' || s[p.i] == '\n' || s[p.i] == '\r') {
		p.i++
	}
	if p.i >= len(s) {
		return jsonToken{kind: tokEnd}, nil
	}
	start := p.i
	switch c := s[p.i]; {
	case c == '{' || c == '}' || c == '[' || c == ']' || c == ',' || c == ':':
		p.i++
		return jsonToken{kind: tokPunct, text: s[start:p.i]}, nil
	case c == '"':
		return p.lexString()
	case c == '-' || isDigit(c):
		i, bad := p.i, false
		if s[i] == '-' {
			i++
		}
		switch {
		case i < len(s) && s[i] == '0':
			i++
		case i < len(s) && isDigit(s[i]):
			for i < len(s) && isDigit(s[i]) {
				i++
			}
		default:
			bad = true
		}
		if i < len(s) && s[i] == '.' {
			i++
			if i >= len(s) || !isDigit(s[i]) {
				bad = true
			}
			for i < len(s) && isDigit(s[i]) {
				i++
			}
		}
		if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
			i++
			if i < len(s) && (s[i] == '+' || s[i] == '-') {
				i++
			}
			if i >= len(s) || !isDigit(s[i]) {
				bad = true
			}
			for i < len(s) && isDigit(s[i]) {
				i++
			}
		}
		j := i
		for j < len(s) && jsonAlnum(s[j]) {
			j++
		}
		p.i = j
		if bad || j > i {
			return jsonToken{}, jsonTokenErr(s[start:j])
		}
		return jsonToken{kind: tokNumber, text: s[start:j]}, nil
	default:
		j := p.i
		for j < len(s) && jsonAlnum(s[j]) {
			j++
		}
		if j == p.i {
			_, n := utf8.DecodeRuneInString(s[j:])
			return jsonToken{}, jsonTokenErr(s[j : j+n])
		}
		p.i = j
		w := s[start:j]
		switch w {
		case "true":
			return jsonToken{kind: tokTrue, text: w}, nil
		case "false":
			return jsonToken{kind: tokFalse, text: w}, nil
		case "null":
			return jsonToken{kind: tokNull, text: w}, nil
		}
		return jsonToken{}, jsonTokenErr(w)
	}
}

func (p *jsonParser) lexString() (jsonToken, error) {
	s := p.s
	start := p.i
	i := p.i + 1
	var b []byte // the decoded value, once an escape is seen
	plain := i
	hiSurrogate := rune(-1)
	for {
		if i >= len(s) {
			p.i = i
			return jsonToken{}, jsonTokenErr(s[start:i])
		}
		c := s[i]
		switch {
		case c == '"':
			if hiSurrogate >= 0 {
				return jsonToken{}, jsonErr("Unicode low surrogate must follow a high surrogate.")
			}
			var v string
			if b == nil {
				v = s[plain:i]
			} else {
				v = string(append(b, s[plain:i]...))
			}
			p.i = i + 1
			return jsonToken{kind: tokString, text: s[start:p.i], str: v}, nil
		case c < 0x20:
			return jsonToken{}, jsonErr("Character with value 0x" + hex2(c) + " must be escaped.")
		case c == '\\':
			b = append(b, s[plain:i]...)
			i++
			if i >= len(s) {
				p.i = i
				return jsonToken{}, jsonTokenErr(s[start:i])
			}
			e := s[i]
			if e == 'u' {
				if i+5 > len(s) || !isHex4(s[i+1:i+5]) {
					return jsonToken{}, jsonErr(`"\u" must be followed by four hexadecimal digits.`)
				}
				cp, _ := strconv.ParseUint(s[i+1:i+5], 16, 32)
				r := rune(cp)
				i += 5
				plain = i
				switch {
				case r >= 0xD800 && r <= 0xDBFF:
					if hiSurrogate >= 0 {
						return jsonToken{}, jsonErr("Unicode high surrogate must not follow a high surrogate.")
					}
					hiSurrogate = r
					continue
				case r >= 0xDC00 && r <= 0xDFFF:
					if hiSurrogate < 0 {
						return jsonToken{}, jsonErr("Unicode low surrogate must follow a high surrogate.")
					}
					r = 0x10000 + (hiSurrogate-0xD800)<<10 + (r - 0xDC00)
					hiSurrogate = -1
				default:
					if hiSurrogate >= 0 {
						return jsonToken{}, jsonErr("Unicode low surrogate must follow a high surrogate.")
					}
				}
				if r == 0 {
					return jsonToken{}, sqlerr.New("22P05", "unsupported Unicode escape sequence").
						WithDetail(`\u0000 cannot be converted to text.`)
				}
				b = utf8.AppendRune(b, r)
				continue
			}
			if hiSurrogate >= 0 {
				return jsonToken{}, jsonErr("Unicode low surrogate must follow a high surrogate.")
			}
			switch e {
			case '"', '\\', '/':
				b = append(b, e)
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			default:
				_, n := utf8.DecodeRuneInString(s[i:])
				return jsonToken{}, jsonErr(`Escape sequence "\` + s[i:i+n] + `" is invalid.`)
			}
			i++
			plain = i
		default:
			if hiSurrogate >= 0 {
				return jsonToken{}, jsonErr("Unicode low surrogate must follow a high surrogate.")
			}
			i++
		}
	}
}

func isHex4(s string) bool {
	for i := 0; i < 4; i++ {
		c := s[i]
		if !(isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

func hex2(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&15]})
}

// canonicalNumber rewrites a valid JSON number as PostgreSQL's numeric
// prints it: plain decimal notation with the input's scale (digits after the
// point minus the exponent, at least 0), no leading zeros, no minus on zero.
func canonicalNumber(s string) string {
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	exp := 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
		if err != nil || e > 1_000_000 || e < -1_000_000 {
			e = 0 // beyond numeric's range; PostgreSQL refuses such input too
		}
		exp, s = e, s[:i]
	}
	intPart, frac := s, ""
	if i := strings.IndexByte(s, '.'); i >= 0 {
		intPart, frac = s[:i], s[i+1:]
	}
	if !strings.ContainsAny(intPart, "123456789") && !strings.ContainsAny(frac, "123456789") && exp == 0 {
		if frac == "" {
			return "0"
		}
		return "0." + frac
	}
	digits := intPart + frac
	e2 := exp - len(frac) // value = digits * 10^e2
	var out []byte
	if neg {
		out = append(out, '-')
	}
	if e2 >= 0 {
		d := strings.TrimLeft(digits, "0")
		if d == "" {
			return "0"
		}
		out = append(out, d...)
		for ; e2 > 0; e2-- {
			out = append(out, '0')
		}
		return string(out)
	}
	scale := -e2
	if len(digits) <= scale {
		digits = strings.Repeat("0", scale-len(digits)+1) + digits
	}
	ip := strings.TrimLeft(digits[:len(digits)-scale], "0")
	if ip == "" {
		ip = "0"
	}
	if !strings.ContainsAny(digits, "123456789") {
		out = out[:0] // -0.00 is 0.00
	}
	out = append(out, ip...)
	out = append(out, '.')
	out = append(out, digits[len(digits)-scale:]...)
	return string(out)
}

// AppendJSON appends v's jsonb text output.
func AppendJSON(buf []byte, v JSON) []byte {
	switch v.Kind {
	case JSONNull:
		return append(buf, "null"...)
	case JSONString:
		return AppendJSONString(buf, v.Str)
	case JSONNumber:
		return append(buf, v.Str...)
	case JSONBool:
		if v.Bool {
			return append(buf, "true"...)
		}
		return append(buf, "false"...)
	case JSONArray:
		buf = append(buf, '[')
		for i, e := range v.Elems {
			if i > 0 {
				buf = append(buf, ", "...)
			}
			buf = AppendJSON(buf, e)
		}
		return append(buf, ']')
	}
	buf = append(buf, '{')
	for i, k := range v.Keys {
		if i > 0 {
			buf = append(buf, ", "...)
		}
		buf = AppendJSONString(buf, k)
		buf = append(buf, ": "...)
		buf = AppendJSON(buf, v.Elems[i])
	}
	return append(buf, '}')
}

// JSONText returns v's canonical jsonb text.
func JSONText(v JSON) string { return string(AppendJSON(nil, v)) }

// AppendJSONString appends s as a JSON string literal, escaped as
// PostgreSQL's escape_json does.
func AppendJSONString(buf []byte, s string) []byte {
	buf = append(buf, '"')
	plain := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		var esc string
		switch c {
		case '"':
			esc = `\"`
		case '\\':
			esc = `\\`
		case '\b':
			esc = `\b`
		case '\f':
			esc = `\f`
		case '\n':
			esc = `\n`
		case '\r':
			esc = `\r`
		case '\t':
			esc = `\t`
		default:
			if c >= 0x20 {
				continue
			}
			esc = `\u00` + hex2(c)
		}
		buf = append(buf, s[plain:i]...)
		buf = append(buf, esc...)
		plain = i + 1
	}
	buf = append(buf, s[plain:]...)
	return append(buf, '"')
}

// AppendJSONPretty appends jsonb_pretty's output of v.
func AppendJSONPretty(buf []byte, v JSON, indent int) []byte {
	nl := func(b []byte, n int) []byte {
		b = append(b, '\n')
		for i := 0; i < n; i++ {
			b = append(b, "    "...)
		}
		return b
	}
	switch v.Kind {
	case JSONArray:
		buf = append(buf, '[')
		for i, e := range v.Elems {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = nl(buf, indent+1)
			buf = AppendJSONPretty(buf, e, indent+1)
		}
		return append(nl(buf, indent), ']')
	case JSONObject:
		buf = append(buf, '{')
		for i, k := range v.Keys {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = nl(buf, indent+1)
			buf = AppendJSONString(buf, k)
			buf = append(buf, ": "...)
			buf = AppendJSONPretty(buf, v.Elems[i], indent+1)
		}
		return append(nl(buf, indent), '}')
	}
	return AppendJSON(buf, v)
}

// CompareJSONB orders two canonical jsonb texts as PostgreSQL's jsonb
// btree operators do.
func CompareJSONB(a, b string) int {
	if a == b {
		return 0
	}
	return CompareJSON(MustParseJSON(a), MustParseJSON(b))
}

// CompareJSON orders two top-level jsonb values as PostgreSQL does: by kind
// (null < string < number < boolean < array < object), arrays by length and
// then element by element, objects by number of pairs and then pair by pair
// in key storage order (key, then value), strings bytewise, numbers by
// value. A top-level scalar sorts as a one-element array that is less than
// a real one-element array, so an empty top-level array sorts below every
// scalar (PostgreSQL's historical rule).
func CompareJSON(a, b JSON) int {
	as, bs := !a.IsContainer(), !b.IsContainer()
	if as != bs && (a.Kind == JSONArray || b.Kind == JSONArray) {
		// One raw scalar (a pseudo array of one element) and one array.
		la, lb := 1, 1
		if !as {
			la = len(a.Elems)
		}
		if !bs {
			lb = len(b.Elems)
		}
		if la != lb {
			return cmpInt(la, lb)
		}
		if as {
			return -1
		}
		return 1
	}
	return compareJSONValue(a, b)
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func compareJSONValue(a, b JSON) int {
	if a.Kind != b.Kind {
		return cmpInt(int(a.Kind), int(b.Kind))
	}
	switch a.Kind {
	case JSONNull:
		return 0
	case JSONString:
		return strings.Compare(a.Str, b.Str)
	case JSONNumber:
		return CompareNumericText(a.Str, b.Str)
	case JSONBool:
		return cmpInt(b2i(a.Bool), b2i(b.Bool))
	case JSONArray:
		if c := cmpInt(len(a.Elems), len(b.Elems)); c != 0 {
			return c
		}
		for i := range a.Elems {
			if c := compareJSONValue(a.Elems[i], b.Elems[i]); c != 0 {
				return c
			}
		}
		return 0
	}
	if c := cmpInt(len(a.Keys), len(b.Keys)); c != 0 {
		return c
	}
	for i := range a.Keys {
		if c := strings.Compare(a.Keys[i], b.Keys[i]); c != 0 {
			return c
		}
		if c := compareJSONValue(a.Elems[i], b.Elems[i]); c != 0 {
			return c
		}
	}
	return 0
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// JSONEqual reports whether two values are equal as jsonb's = decides.
func JSONEqual(a, b JSON) bool { return compareJSONValue(a, b) == 0 }

// CompareNumericText compares two canonical numeric texts by value.
func CompareNumericText(a, b string) int {
	na, nb := strings.HasPrefix(a, "-"), strings.HasPrefix(b, "-")
	switch {
	case na && !nb:
		return -1
	case nb && !na:
		return 1
	}
	c := compareMagnitude(strings.TrimPrefix(a, "-"), strings.TrimPrefix(b, "-"))
	if na {
		return -c
	}
	return c
}

func compareMagnitude(a, b string) int {
	ai, af, _ := strings.Cut(a, ".")
	bi, bf, _ := strings.Cut(b, ".")
	ai, bi = strings.TrimLeft(ai, "0"), strings.TrimLeft(bi, "0")
	if c := cmpInt(len(ai), len(bi)); c != 0 {
		return c
	}
	if c := strings.Compare(ai, bi); c != 0 {
		return c
	}
	return strings.Compare(strings.TrimRight(af, "0"), strings.TrimRight(bf, "0"))
}

// sortStable is an insertion/merge sort on ints without the sort package's
// interface boxing; objects are small.
func sortStable(idx []int, less func(a, b int) bool) {
	if len(idx) < 12 {
		for i := 1; i < len(idx); i++ {
			for j := i; j > 0 && less(idx[j], idx[j-1]); j-- {
				idx[j], idx[j-1] = idx[j-1], idx[j]
			}
		}
		return
	}
	m := len(idx) / 2
	sortStable(idx[:m], less)
	sortStable(idx[m:], less)
	merged := make([]int, 0, len(idx))
	i, j := 0, m
	for i < m && j < len(idx) {
		if less(idx[j], idx[i]) {
			merged = append(merged, idx[j])
			j++
		} else {
			merged = append(merged, idx[i])
			i++
		}
	}
	merged = append(merged, idx[i:m]...)
	merged = append(merged, idx[j:]...)
	copy(idx, merged)
}

// jsonbBinaryVersion is the version byte that starts jsonb's binary wire
// format; the text follows.
const jsonbBinaryVersion = 1

func decodeJSONBBinary(b []byte) (Datum, error) {
	if len(b) == 0 || b[0] != jsonbBinaryVersion {
		return Null, sqlerr.New(invalidBinaryRepresentation, "unsupported jsonb version number %d", firstByte(b))
	}
	if !utf8.Valid(b[1:]) {
		return Null, sqlerr.New(sqlerr.CharacterNotInRepertoire, "invalid byte sequence for encoding \"UTF8\"")
	}
	v, err := ParseJSONB(string(b[1:]))
	return DText(v), err
}

func firstByte(b []byte) int {
	if len(b) == 0 {
		return 0
	}
	return int(b[0])
}
