package types

// OIDBpchar is blank-padded char(n), which streamsql stores as text.
const OIDBpchar = 1042

// FromOID returns the type a client means by a PostgreSQL type OID, for
// example in the parameter types of a Parse message. Types carry no
// modifiers (a parameter declared varchar is unbounded text, numeric has the
// default scale). ok is false for OIDs of types streamsql does not have,
// and for OIDUnknown.
func FromOID(oid uint32) (t T, ok bool) {
	switch oid {
	case OIDBool:
		return BoolT, true
	case OIDInt2:
		return Int16T, true
	case OIDInt4:
		return Int32T, true
	case OIDInt8:
		return Int64T, true
	case OIDFloat4:
		return Float32T, true
	case OIDFloat8:
		return Float64T, true
	case OIDNumeric:
		return NumericT, true
	case OIDText, OIDVarchar, OIDBpchar:
		return TextT, true
	case OIDDate:
		return DateT, true
	case OIDTimestamp:
		return TimestampT, true
	case OIDTimestampTZ:
		return TimestampTZT, true
	case OIDInterval:
		return IntervalT, true
	case OIDBytea:
		return ByteaT, true
	case OIDUUID:
		return UUIDT, true
	case OIDJSONB, OIDJSON:
		return JSONBT, true
	}
	return T{}, false
}
