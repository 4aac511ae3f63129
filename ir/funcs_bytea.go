package ir

import "github.com/streamsql/streamsql/types"

// Functions and operators of bytea and uuid, with PostgreSQL's signatures.
// bytea's || , length, substr, overlay, position (strpos), btrim/ltrim/rtrim
// and md5 are overloads of the text functions of the same names.
const (
	FnEncode        = "encode"     // encode(bytea, 'hex'|'base64'|'escape') -> text
	FnDecode        = "decode"     // decode(text, 'hex'|'base64'|'escape') -> bytea
	FnGetByte       = "get_byte"   // get_byte(bytea, n): byte n (0-based)
	FnSetByte       = "set_byte"   // set_byte(bytea, n, v)
	FnGetBit        = "get_bit"    // get_bit(bytea, n): bit n, low bit of byte 0 first
	FnSetBit        = "set_bit"    // set_bit(bytea, n, v)
	FnSHA224        = "sha224"     // the SHA-2 digests of a bytea, as bytea
	FnSHA256        = "sha256"     //
	FnSHA384        = "sha384"     //
	FnSHA512        = "sha512"     //
	FnConvertTo     = "convert_to" // convert_to(text, encoding): UTF8 only
	FnConvertFrom   = "convert_from"
	FnGenRandomUUID = "gen_random_uuid" // volatile: refused in materialized views
)

// byteaLikeTypes are the types this file adds to the comparable types.
var byteaLikeTypes = []types.T{types.ByteaT, types.UUIDT}

func init() {
	b, i4, i8, txt, by := types.BoolT, types.Int32T, types.Int64T, types.TextT, types.ByteaT
	for _, t := range byteaLikeTypes {
		defComparable(b, t)
	}
	def(FnConcatOp, by, by, by)
	def(FnLength, i4, by)
	def(FnOctetLen, i4, by)
	def(FnBitLength, i4, by)
	def(FnSubstr, by, by, i4)
	def(FnSubstr, by, by, i4, i4)
	def(FnOverlay, by, by, by, i4)
	def(FnOverlay, by, by, by, i4, i4)
	def(FnStrpos, i4, by, by)
	for _, fn := range []string{FnTrim, FnLTrim, FnRTrim} {
		def(fn, by, by, by)
	}
	def(FnMD5, txt, by)
	for _, fn := range []string{FnSHA224, FnSHA256, FnSHA384, FnSHA512} {
		def(fn, by, by)
	}
	def(FnEncode, txt, by, txt)
	def(FnDecode, by, txt, txt)
	def(FnGetByte, i4, by, i4)
	def(FnSetByte, by, by, i4, i4)
	def(FnGetBit, i4, by, i8)
	def(FnSetBit, by, by, i8, i4)
	def(FnConvertTo, by, txt, txt)
	def(FnConvertFrom, txt, by, txt)
	def(FnGenRandomUUID, types.UUIDT)
}

// defComparable defines the comparison operators and the NULL-aware
// functions of type t, as funcs.go does for comparableTypes.
func defComparable(b, t types.T) {
	for _, fn := range []string{FnEq, FnNe, FnLt, FnLe, FnGt, FnGe} {
		def(fn, b, t, t)
	}
	def(FnIsDistinct, b, t, t).Strict = false
	def(FnIsNotDistinct, b, t, t).Strict = false
	def(FnIsNull, b, t).Strict = false
	def(FnIsNotNull, b, t).Strict = false
	c := def(FnCoalesce, t, t)
	c.Variadic, c.Strict = true, false
	def(FnNullIf, t, t, t).Strict = false
	g := def(FnGreatest, t, t)
	g.Variadic, g.Strict = true, false
	l := def(FnLeast, t, t)
	l.Variadic, l.Strict = true, false
	def(FnSingleRow, t, types.Int64T, t).Strict = false
}
