package eval

import (
	"crypto/md5"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// The bytea functions, with PostgreSQL's semantics and errors. A bytea datum
// holds its bytes in S; results built in k.buf alias it (see kctx).

const codeArraySubscript = "2202E"

func init() {
	by, txt, i4, i8 := types.ByteaT, types.TextT, types.Int32T, types.Int64T
	fn := func(name string, args []types.T, k scalarFn) { reg(name, args, fixed(k)) }

	fn(ir.FnConcatOp, ts(by, by), func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		return k.byteaResult(append(append(k.buf[:0], a[0].S...), a[1].S...)), nil
	})
	length := func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		return types.DInt(int64(len(a[0].S))), nil
	}
	fn(ir.FnLength, ts(by), length)
	fn(ir.FnOctetLen, ts(by), length)
	fn(ir.FnBitLength, ts(by), func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		return types.DInt(int64(len(a[0].S)) * 8), nil
	})
	fn(ir.FnSubstr, ts(by, i4), func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		return byteaSubstr(a[0].S, a[1].I, -1, false)
	})
	fn(ir.FnSubstr, ts(by, i4, i4), func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		return byteaSubstr(a[0].S, a[1].I, a[2].I, true)
	})
	fn(ir.FnOverlay, ts(by, by, i4), func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		return byteaOverlay(k, a[0].S, a[1].S, a[2].I, int64(len(a[1].S)))
	})
	fn(ir.FnOverlay, ts(by, by, i4, i4), func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		return byteaOverlay(k, a[0].S, a[1].S, a[2].I, a[3].I)
	})
	fn(ir.FnStrpos, ts(by, by), func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		return types.DInt(int64(strings.Index(a[0].S, a[1].S) + 1)), nil
	})
	for _, name := range []string{ir.FnTrim, ir.FnLTrim, ir.FnRTrim} {
		left, right := name != ir.FnRTrim, name != ir.FnLTrim
		fn(name, ts(by, by), func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			return types.DBytes(trimBytes(a[0].S, a[1].S, left, right)), nil
		})
	}
	fn(ir.FnMD5, ts(by), func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		sum := md5.Sum([]byte(a[0].S))
		return k.textResult(hex.AppendEncode(k.buf[:0], sum[:])), nil
	})
	for name, sum := range map[string]func([]byte) []byte{
		ir.FnSHA224: func(b []byte) []byte { s := sha256.Sum224(b); return s[:] },
		ir.FnSHA256: func(b []byte) []byte { s := sha256.Sum256(b); return s[:] },
		ir.FnSHA384: func(b []byte) []byte { s := sha512.Sum384(b); return s[:] },
		ir.FnSHA512: func(b []byte) []byte { s := sha512.Sum512(b); return s[:] },
	} {
		fn(name, ts(by), func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			return k.byteaResult(append(k.buf[:0], sum([]byte(a[0].S))...)), nil
		})
	}
	fn(ir.FnEncode, ts(by, txt), func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		b, err := encodeBytes(k.buf[:0], a[0].S, a[1].S)
		if err != nil {
			return types.Null, err
		}
		return k.textResult(b), nil
	})
	fn(ir.FnDecode, ts(txt, txt), func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		b, err := decodeBytes(k.buf[:0], a[0].S, a[1].S)
		if err != nil {
			return types.Null, err
		}
		return k.byteaResult(b), nil
	})
	fn(ir.FnGetByte, ts(by, i4), func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		s, n := a[0].S, a[1].I
		if n < 0 || n >= int64(len(s)) {
			return types.Null, indexRangeErr(n, int64(len(s))-1)
		}
		return types.DInt(int64(s[n])), nil
	})
	fn(ir.FnSetByte, ts(by, i4, i4), func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		s, n := a[0].S, a[1].I
		if n < 0 || n >= int64(len(s)) {
			return types.Null, indexRangeErr(n, int64(len(s))-1)
		}
		b := append(k.buf[:0], s...)
		b[n] = byte(a[2].I)
		return k.byteaResult(b), nil
	})
	fn(ir.FnGetBit, ts(by, i8), func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		s, n := a[0].S, a[1].I
		if n < 0 || n/8 >= int64(len(s)) {
			return types.Null, indexRangeErr(n, int64(len(s))*8-1)
		}
		return types.DInt(int64(s[n/8]>>(n%8)) & 1), nil
	})
	fn(ir.FnSetBit, ts(by, i8, i4), func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		s, n, v := a[0].S, a[1].I, a[2].I
		if n < 0 || n/8 >= int64(len(s)) {
			return types.Null, indexRangeErr(n, int64(len(s))*8-1)
		}
		if v != 0 && v != 1 {
			return types.Null, sqlerr.New(sqlerr.InvalidParameterValue, "new bit must be 0 or 1")
		}
		b := append(k.buf[:0], s...)
		b[n/8] = b[n/8]&^(1<<(n%8)) | byte(v)<<(n%8)
		return k.byteaResult(b), nil
	})
	fn(ir.FnConvertTo, ts(txt, txt), func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		if err := checkUTF8Name(a[1].S, "destination"); err != nil {
			return types.Null, err
		}
		return types.DBytes(a[0].S), nil
	})
	fn(ir.FnConvertFrom, ts(by, txt), func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		if err := checkUTF8Name(a[1].S, "source"); err != nil {
			return types.Null, err
		}
		if err := checkUTF8Text(a[0].S); err != nil {
			return types.Null, err
		}
		return types.DText(a[0].S), nil
	})
	fn(ir.FnGenRandomUUID, nil, func(k *kctx, _ []types.Datum) (types.Datum, *sqlerr.Error) {
		return k.byteaResult(types.AppendRandomUUID(k.buf[:0])), nil
	})
}

// byteaResult returns b (built in k.buf) as a bytea datum aliasing k.buf.
func (k *kctx) byteaResult(b []byte) types.Datum { return types.DBytes(k.textResult(b).S) }

// byteaSubstr is substring(s from start [for count]) over bytes.
func byteaSubstr(s string, start, count int64, hasCount bool) (types.Datum, *sqlerr.Error) {
	from := min(max(start, 1)-1, int64(len(s)))
	if !hasCount {
		return types.DBytes(s[from:]), nil
	}
	if count < 0 {
		return types.Null, errNegativeSubstr
	}
	end := min(start+count-1, int64(len(s)))
	if end <= from {
		return types.DBytes(""), nil
	}
	return types.DBytes(s[from:end]), nil
}

// byteaOverlay is overlay(s placing r from start for count).
func byteaOverlay(k *kctx, s, r string, start, count int64) (types.Datum, *sqlerr.Error) {
	head, err := byteaSubstr(s, 1, start-1, true)
	if err != nil {
		return types.Null, err
	}
	tail, _ := byteaSubstr(s, start+count, -1, false)
	return k.byteaResult(append(append(append(k.buf[:0], head.S...), r...), tail.S...)), nil
}

// trimBytes removes the bytes of set from the ends of s.
func trimBytes(s, set string, left, right bool) string {
	if left {
		for len(s) > 0 && strings.IndexByte(set, s[0]) >= 0 {
			s = s[1:]
		}
	}
	if right {
		for len(s) > 0 && strings.IndexByte(set, s[len(s)-1]) >= 0 {
			s = s[:len(s)-1]
		}
	}
	return s
}

func indexRangeErr(n, last int64) *sqlerr.Error {
	return sqlerr.New(codeArraySubscript, "index %d out of valid range, 0..%d", n, last)
}

// encodeBytes is encode(s, format).
func encodeBytes(buf []byte, s, format string) ([]byte, *sqlerr.Error) {
	switch strings.ToLower(format) {
	case "hex":
		return hex.AppendEncode(buf, []byte(s)), nil
	case "base64":
		return appendBase64(buf, s), nil
	case "escape":
		for i := 0; i < len(s); i++ {
			switch c := s[i]; {
			case c == '\\':
				buf = append(buf, '\\', '\\')
			case c == 0 || c >= 0x80:
				buf = append(buf, '\\', '0'+c>>6, '0'+(c>>3)&7, '0'+c&7)
			default:
				buf = append(buf, c)
			}
		}
		return buf, nil
	}
	return nil, sqlerr.New(sqlerr.InvalidParameterValue, "unrecognized encoding: \"%s\"", format)
}

// decodeBytes is decode(s, format).
func decodeBytes(buf []byte, s, format string) ([]byte, *sqlerr.Error) {
	var err error
	switch strings.ToLower(format) {
	case "hex":
		buf, err = types.DecodeHex(buf, s)
	case "base64":
		return decodeBase64(buf, s)
	case "escape":
		buf, err = types.DecodeByteaEscape(buf, s)
	default:
		return nil, sqlerr.New(sqlerr.InvalidParameterValue, "unrecognized encoding: \"%s\"", format)
	}
	if err != nil {
		return nil, sqlerr.Wrap(err)
	}
	return buf, nil
}

const base64Chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

// appendBase64 is PostgreSQL's base64 encoding: a newline after every 76
// output characters.
func appendBase64(buf []byte, s string) []byte {
	start := len(buf)
	lineEnd := start + 76
	var acc uint32
	pos := 2
	for i := 0; i < len(s); i++ {
		acc |= uint32(s[i]) << (pos * 8)
		pos--
		if pos < 0 {
			buf = append(buf, base64Chars[acc>>18&63], base64Chars[acc>>12&63], base64Chars[acc>>6&63], base64Chars[acc&63])
			pos, acc = 2, 0
		}
		if len(buf) >= lineEnd {
			buf = append(buf, '\n')
			lineEnd = len(buf) + 76
		}
	}
	if pos != 2 {
		buf = append(buf, base64Chars[acc>>18&63], base64Chars[acc>>12&63])
		if pos == 0 {
			buf = append(buf, base64Chars[acc>>6&63])
		} else {
			buf = append(buf, '=')
		}
		buf = append(buf, '=')
	}
	return buf
}

// decodeBase64 is PostgreSQL's pg_base64_decode: white space is skipped, =
// ends the data.
func decodeBase64(buf []byte, s string) ([]byte, *sqlerr.Error) {
	var acc uint32
	pos, end := 0, 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			continue
		}
		var v uint32
		if c == '=' {
			if end == 0 {
				switch pos {
				case 2:
					end = 1
				case 3:
					end = 2
				default:
					return nil, sqlerr.New(sqlerr.InvalidParameterValue, "unexpected \"=\" while decoding base64 sequence")
				}
			}
		} else {
			j := strings.IndexByte(base64Chars, c)
			if j < 0 {
				return nil, sqlerr.New(sqlerr.InvalidParameterValue,
					"invalid symbol \"%s\" found while decoding base64 sequence", firstRune(s[i:]))
			}
			v = uint32(j)
		}
		acc = acc<<6 | v
		pos++
		if pos == 4 {
			buf = append(buf, byte(acc>>16))
			if end == 0 || end > 1 {
				buf = append(buf, byte(acc>>8))
			}
			if end == 0 || end > 2 {
				buf = append(buf, byte(acc))
			}
			acc, pos = 0, 0
		}
	}
	if pos != 0 {
		e := sqlerr.New(sqlerr.InvalidParameterValue, "invalid base64 end sequence")
		e.Hint = "Input data is missing padding, is truncated, or is otherwise corrupted."
		return nil, e
	}
	return buf, nil
}

func firstRune(s string) string {
	_, n := utf8.DecodeRuneInString(s)
	return s[:n]
}

// checkUTF8Name accepts the names PostgreSQL gives UTF8 (case and
// punctuation ignored: utf8, UTF-8, unicode); other encodings are not
// supported, and names that are no encoding are 22023.
func checkUTF8Name(name, which string) *sqlerr.Error {
	var norm []byte
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'A' && c <= 'Z':
			norm = append(norm, c+'a'-'A')
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			norm = append(norm, c)
		}
	}
	switch string(norm) {
	case "utf8", "unicode":
		return nil
	case "sqlascii", "latin1", "latin2", "latin9", "win1252", "win1251", "euckr", "eucjp", "sjis", "gbk", "big5", "koi8r":
		return sqlerr.Unsupported("conversion to or from encoding %s", strings.ToUpper(name))
	}
	return sqlerr.New(sqlerr.InvalidParameterValue, "invalid %s encoding name \"%s\"", which, name)
}

// checkUTF8Text refuses bytes that are not UTF-8 text (NUL included), with
// PostgreSQL's message.
func checkUTF8Text(s string) *sqlerr.Error {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == 0 || (r == utf8.RuneError && n <= 1) {
			var b strings.Builder
			for j := i; j < len(s) && j < i+seqLen(s[i]); j++ {
				if j > i {
					b.WriteByte(' ')
				}
				fmt.Fprintf(&b, "0x%02x", s[j])
			}
			return sqlerr.New(sqlerr.CharacterNotInRepertoire, "invalid byte sequence for encoding \"UTF8\": %s", b.String())
		}
		i += n
	}
	return nil
}

// seqLen is the length of the UTF-8 sequence that lead byte c starts.
func seqLen(c byte) int {
	switch {
	case c >= 0xf0:
		return 4
	case c >= 0xe0:
		return 3
	case c >= 0xc0:
		return 2
	}
	return 1
}
