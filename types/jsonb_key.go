package types

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
)

// The memcomparable key encoding of jsonb, for state keys (group keys,
// primary keys, sort keys of TopN and ordered aggregates). Keys compare
// bytewise in PostgreSQL's jsonb order (CompareJSON), except that numbers of
// equal value and different scale (1.0 and 1) get distinct keys, ordered by
// scale; decoding gives back the canonical text exactly.
//
//	value    tag, then by kind:
//	null     0x20
//	string   0x21, the bytes with 0x00 escaped as 0x00 0xFF, then 0x00 0x01
//	number   0x22, the class (0x01 negative, 0x02 zero, 0x03 positive); for
//	         non-zero numbers the decimal exponent E of 0.D x 10^E as a
//	         uint32 with the sign bit flipped, then the significant digits D
//	         ('0'..'9') and 0x00; both complemented for negative numbers;
//	         then the scale as a uint32
//	boolean  0x23, then 0 or 1
//	array    0x30, the element count as a uint32, the elements
//	object   0x40, the pair count as a uint32, then per pair in storage
//	         order the key (as a string, without tag) and the value
//
// At the top level an empty array is the single byte 0x10, so that it sorts
// below every scalar, and top-level scalars (tags 0x2x) below non-empty
// arrays, as PostgreSQL orders raw scalars.
const (
	jkEmptyTop byte = 0x10
	jkNull     byte = 0x20
	jkString   byte = 0x21
	jkNumber   byte = 0x22
	jkBool     byte = 0x23
	jkArray    byte = 0x30
	jkObject   byte = 0x40
)

var errCorruptJSONBKey = errors.New("types: corrupt jsonb key")

// AppendJSONBKey appends the key encoding of canonical jsonb text s.
func AppendJSONBKey(buf []byte, s string) []byte {
	v := MustParseJSON(s)
	if v.Kind == JSONArray && len(v.Elems) == 0 {
		return append(buf, jkEmptyTop)
	}
	return appendJSONKeyValue(buf, v)
}

func appendJSONKeyValue(buf []byte, v JSON) []byte {
	switch v.Kind {
	case JSONNull:
		return append(buf, jkNull)
	case JSONString:
		return appendJSONKeyString(append(buf, jkString), v.Str)
	case JSONNumber:
		return appendNumericKey(append(buf, jkNumber), v.Str)
	case JSONBool:
		return append(buf, jkBool, byte(b2i(v.Bool)))
	case JSONArray:
		buf = binary.BigEndian.AppendUint32(append(buf, jkArray), uint32(len(v.Elems)))
		for _, e := range v.Elems {
			buf = appendJSONKeyValue(buf, e)
		}
		return buf
	}
	buf = binary.BigEndian.AppendUint32(append(buf, jkObject), uint32(len(v.Keys)))
	for i, k := range v.Keys {
		buf = appendJSONKeyString(buf, k)
		buf = appendJSONKeyValue(buf, v.Elems[i])
	}
	return buf
}

func appendJSONKeyString(buf []byte, s string) []byte {
	for {
		i := strings.IndexByte(s, 0)
		if i < 0 {
			buf = append(buf, s...)
			break
		}
		buf = append(buf, s[:i]...)
		buf = append(buf, 0x00, 0xFF)
		s = s[i+1:]
	}
	return append(buf, 0x00, 0x01)
}

// appendNumericKey encodes canonical numeric text.
func appendNumericKey(buf []byte, s string) []byte {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	ip, frac, _ := strings.Cut(s, ".")
	scale := uint32(len(frac))
	ip = strings.TrimLeft(ip, "0")
	var e int
	var digits string
	if ip != "" {
		e = len(ip)
		digits = ip + frac
	} else {
		f := strings.TrimLeft(frac, "0")
		e = -(len(frac) - len(f))
		digits = f
	}
	digits = strings.TrimRight(digits, "0")
	if digits == "" {
		buf = append(buf, 0x02)
		return binary.BigEndian.AppendUint32(buf, scale)
	}
	if !neg {
		buf = append(buf, 0x03)
		buf = binary.BigEndian.AppendUint32(buf, uint32(int32(e))^(1<<31))
		buf = append(buf, digits...)
		buf = append(buf, 0x00)
	} else {
		buf = append(buf, 0x01)
		buf = binary.BigEndian.AppendUint32(buf, ^(uint32(int32(e)) ^ (1 << 31)))
		for i := 0; i < len(digits); i++ {
			buf = append(buf, ^digits[i])
		}
		buf = append(buf, 0xFF)
	}
	return binary.BigEndian.AppendUint32(buf, scale)
}

// DecodeJSONBKey decodes a key made by AppendJSONBKey from the front of buf
// into canonical text, and returns the rest of buf.
func DecodeJSONBKey(buf []byte) (string, []byte, error) {
	if len(buf) > 0 && buf[0] == jkEmptyTop {
		return "[]", buf[1:], nil
	}
	out, rest, err := decodeJSONKeyValue(nil, buf, 0)
	if err != nil {
		return "", nil, err
	}
	return string(out), rest, nil
}

func decodeJSONKeyValue(out, buf []byte, depth int) ([]byte, []byte, error) {
	if len(buf) == 0 || depth > maxJSONDepth {
		return nil, nil, errCorruptJSONBKey
	}
	tag, buf := buf[0], buf[1:]
	switch tag {
	case jkNull:
		return append(out, "null"...), buf, nil
	case jkString:
		s, rest, err := decodeJSONKeyString(buf)
		if err != nil {
			return nil, nil, err
		}
		return AppendJSONString(out, s), rest, nil
	case jkNumber:
		return decodeNumericKey(out, buf)
	case jkBool:
		if len(buf) == 0 || buf[0] > 1 {
			return nil, nil, errCorruptJSONBKey
		}
		if buf[0] == 1 {
			return append(out, "true"...), buf[1:], nil
		}
		return append(out, "false"...), buf[1:], nil
	case jkArray, jkObject:
		if len(buf) < 4 {
			return nil, nil, errCorruptJSONBKey
		}
		n := int(binary.BigEndian.Uint32(buf))
		buf = buf[4:]
		open, close := byte('['), byte(']')
		if tag == jkObject {
			open, close = '{', '}'
		}
		out = append(out, open)
		for i := 0; i < n; i++ {
			if i > 0 {
				out = append(out, ", "...)
			}
			if tag == jkObject {
				k, rest, err := decodeJSONKeyString(buf)
				if err != nil {
					return nil, nil, err
				}
				out = append(AppendJSONString(out, k), ": "...)
				buf = rest
			}
			var err error
			if out, buf, err = decodeJSONKeyValue(out, buf, depth+1); err != nil {
				return nil, nil, err
			}
		}
		return append(out, close), buf, nil
	}
	return nil, nil, errCorruptJSONBKey
}

func decodeJSONKeyString(buf []byte) (string, []byte, error) {
	var out []byte
	for {
		i := bytes.IndexByte(buf, 0)
		if i < 0 || i+1 >= len(buf) {
			return "", nil, errCorruptJSONBKey
		}
		out = append(out, buf[:i]...)
		switch buf[i+1] {
		case 0x01:
			return string(out), buf[i+2:], nil
		case 0xFF:
			out = append(out, 0)
			buf = buf[i+2:]
		default:
			return "", nil, errCorruptJSONBKey
		}
	}
}

func decodeNumericKey(out, buf []byte) ([]byte, []byte, error) {
	if len(buf) == 0 {
		return nil, nil, errCorruptJSONBKey
	}
	class, buf := buf[0], buf[1:]
	var neg bool
	var e int
	var digits []byte
	switch class {
	case 0x02:
	case 0x01, 0x03:
		neg = class == 0x01
		if len(buf) < 4 {
			return nil, nil, errCorruptJSONBKey
		}
		u := binary.BigEndian.Uint32(buf)
		if neg {
			u = ^u
		}
		e = int(int32(u ^ (1 << 31)))
		buf = buf[4:]
		term := byte(0x00)
		if neg {
			term = 0xFF
		}
		i := bytes.IndexByte(buf, term)
		if i < 0 {
			return nil, nil, errCorruptJSONBKey
		}
		digits = append(digits, buf[:i]...)
		if neg {
			for j := range digits {
				digits[j] = ^digits[j]
			}
		}
		buf = buf[i+1:]
	default:
		return nil, nil, errCorruptJSONBKey
	}
	if len(buf) < 4 {
		return nil, nil, errCorruptJSONBKey
	}
	scale := int(binary.BigEndian.Uint32(buf))
	buf = buf[4:]
	if neg {
		out = append(out, '-')
	}
	// The integer part: the first e digits (zero-padded), or 0.
	if e > 0 {
		for i := 0; i < e; i++ {
			if i < len(digits) {
				out = append(out, digits[i])
			} else {
				out = append(out, '0')
			}
		}
	} else {
		out = append(out, '0')
	}
	if scale > 0 {
		out = append(out, '.')
		written := 0
		for i := e; written < scale; i++ {
			c := byte('0')
			if i >= 0 && i < len(digits) {
				c = digits[i]
			}
			out = append(out, c)
			written++
		}
	}
	return out, buf, nil
}
