package types

import (
	"crypto/rand"

	"github.com/streamsql/streamsql/sqlerr"
)

// uuid is a 128-bit identifier. A uuid Datum holds its 16 bytes in S; a
// column is an Arrow Binary column whose values are all 16 bytes long (see
// docs/decisions.md for why not FixedSizeBinary). Values order bytewise, as
// PostgreSQL's uuid_cmp orders them.

// UUIDT is the uuid type.
var UUIDT = T{Kind: UUID}

// PostgreSQL's OIDs of uuid and uuid[].
const (
	OIDUUID      = 2950
	OIDUUIDArray = 2951
)

func init() { arrayOIDs[UUID] = OIDUUIDArray }

// UUIDLen is the length of a uuid in bytes.
const UUIDLen = 16

// AppendUUID appends the canonical text of uuid u (16 bytes):
// lower-case hex in groups 8-4-4-4-12.
func AppendUUID(buf []byte, u string) []byte {
	for i := 0; i < len(u); i++ {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			buf = append(buf, '-')
		}
		buf = append(buf, hexDigits[u[i]>>4], hexDigits[u[i]&15])
	}
	return buf
}

// ParseUUID reads a uuid as PostgreSQL's uuid_in does: 32 hex digits of
// either case, optionally in braces, with an optional hyphen after any group
// of four digits. Anything else is 22P02.
func ParseUUID(s string) (string, error) {
	var u [UUIDLen]byte
	src := s
	braces := len(src) > 0 && src[0] == '{'
	if braces {
		src = src[1:]
	}
	for i := range u {
		if len(src) < 2 {
			return "", uuidSyntaxErr(s)
		}
		hi, ok1 := hexVal(src[0])
		lo, ok2 := hexVal(src[1])
		if !ok1 || !ok2 {
			return "", uuidSyntaxErr(s)
		}
		u[i] = hi<<4 | lo
		src = src[2:]
		if len(src) > 0 && src[0] == '-' && i%2 == 1 && i < UUIDLen-1 {
			src = src[1:]
		}
	}
	if braces {
		if len(src) == 0 || src[0] != '}' {
			return "", uuidSyntaxErr(s)
		}
		src = src[1:]
	}
	if len(src) != 0 {
		return "", uuidSyntaxErr(s)
	}
	return string(u[:]), nil
}

func uuidSyntaxErr(s string) error {
	return sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type uuid: \"%s\"", s)
}

// AppendRandomUUID appends a random (version 4, RFC 4122 variant) uuid to
// buf, as gen_random_uuid() makes one.
func AppendRandomUUID(buf []byte) []byte {
	var u [UUIDLen]byte
	if _, err := rand.Read(u[:]); err != nil {
		panic("types: no randomness: " + err.Error())
	}
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return append(buf, u[:]...)
}
