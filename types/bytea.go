package types

import (
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/streamsql/streamsql/sqlerr"
)

// bytea is a byte string. A bytea Datum holds its bytes in S (any bytes, not
// necessarily UTF-8); a column is an Arrow Binary column. Values order
// bytewise, shorter prefix first, as PostgreSQL's byteacmp orders them.

// ByteaT is the bytea type.
var ByteaT = T{Kind: Bytea}

// PostgreSQL's OIDs of bytea and bytea[].
const (
	OIDBytea      = 17
	OIDByteaArray = 1001
)

func init() { arrayOIDs[Bytea] = OIDByteaArray }

// DBytes returns a bytea (or uuid) datum holding the bytes of s.
func DBytes(s string) Datum { return Datum{S: s} }

const hexDigits = "0123456789abcdef"

// AppendByteaHex appends PostgreSQL's hex output of b (bytea_output = hex):
// \x and two lower-case hex digits per byte.
func AppendByteaHex(buf []byte, b string) []byte {
	buf = append(buf, '\\', 'x')
	for i := 0; i < len(b); i++ {
		buf = append(buf, hexDigits[b[i]>>4], hexDigits[b[i]&15])
	}
	return buf
}

// AppendByteaEscape appends PostgreSQL's escape output of b (bytea_output =
// escape): a backslash doubled, bytes outside 0x20..0x7e as \ooo.
func AppendByteaEscape(buf []byte, b string) []byte {
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '\\':
			buf = append(buf, '\\', '\\')
		case c < 0x20 || c > 0x7e:
			buf = append(buf, '\\', '0'+c>>6, '0'+(c>>3)&7, '0'+c&7)
		default:
			buf = append(buf, c)
		}
	}
	return buf
}

// ParseBytea reads PostgreSQL's bytea input (byteain): \x followed by hex
// digit pairs (white space allowed between pairs), or the escape format where
// \\ is a backslash and \ooo (first digit 0-3) an octal byte.
func ParseBytea(s string) (string, error) {
	if len(s) >= 2 && s[0] == '\\' && s[1] == 'x' {
		b, err := DecodeHex(nil, s[2:])
		return string(b), err
	}
	b, err := DecodeByteaEscape(nil, s)
	return string(b), err
}

// DecodeHex appends the bytes of hex digit pairs s to dst, skipping white
// space between pairs, as PostgreSQL's hex_decode does (22023 on a bad digit
// or an odd number of digits).
func DecodeHex(dst []byte, s string) ([]byte, error) {
	for i := 0; i < len(s); {
		c := s[i]
		if c == ' ' || c == '\n' || c == '\t' || c == '\r' {
			i++
			continue
		}
		hi, ok := hexVal(c)
		if !ok {
			return nil, invalidHexDigit(s[i:])
		}
		if i+1 >= len(s) {
			return nil, sqlerr.New(sqlerr.InvalidParameterValue, "invalid hexadecimal data: odd number of digits")
		}
		lo, ok := hexVal(s[i+1])
		if !ok {
			return nil, invalidHexDigit(s[i+1:])
		}
		dst = append(dst, hi<<4|lo)
		i += 2
	}
	return dst, nil
}

func invalidHexDigit(s string) error {
	return sqlerr.New(sqlerr.InvalidParameterValue, "invalid hexadecimal digit: \"%s\"", firstChar(s))
}

// firstChar is the first UTF-8 character of s (or its first byte), as
// PostgreSQL's messages quote it with pg_mblen.
func firstChar(s string) string {
	n := 1
	if c := s[0]; c >= 0xc0 {
		switch {
		case c >= 0xf0:
			n = 4
		case c >= 0xe0:
			n = 3
		default:
			n = 2
		}
	}
	return s[:min(n, len(s))]
}

func hexVal(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// DecodeByteaEscape appends the bytes of the escape format s to dst: \\ is a
// backslash, \ooo an octal byte with a first digit 0-3, any other backslash
// 22P02 (byteain and decode(s, 'escape') read the same format).
func DecodeByteaEscape(dst []byte, s string) ([]byte, error) {
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c != '\\':
			dst = append(dst, c)
			i++
		case i+3 < len(s) && s[i+1] >= '0' && s[i+1] <= '3' && isOctal(s[i+2]) && isOctal(s[i+3]):
			dst = append(dst, (s[i+1]-'0')<<6|(s[i+2]-'0')<<3|(s[i+3]-'0'))
			i += 4
		case i+1 < len(s) && s[i+1] == '\\':
			dst = append(dst, '\\')
			i += 2
		default:
			return nil, sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type bytea")
		}
	}
	return dst, nil
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

// binaryValue reads row i of a Binary column without copying: the string
// aliases the column's data, valid while the column is alive.
func binaryValue(arr arrow.Array, i int) string {
	b := arr.(*array.Binary).Value(i)
	return unsafe.String(unsafe.SliceData(b), len(b))
}
