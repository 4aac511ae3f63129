package types

import (
	"github.com/streamsql/streamsql/sqlerr"
)

// Maps (RisingWave's MAP(K, V)).
//
// A map type is T{Kind: Map, Fields: [key K, value V]}, the interned field
// list of its entries. A map is represented as the array of its entries:
// an Arrow List of Struct<key, value>, and a map Datum holds its entries in
// Arr, each a struct datum of the key and the value, in insertion order.
// Keys are unique and never NULL (the constructors enforce it). Maps have
// no order and no equality, as in RisingWave: the binder refuses them in
// comparisons, GROUP BY, DISTINCT, ORDER BY and keys.

// MapOf returns the type MAP(k, v).
func MapOf(k, v T) T {
	return T{Kind: Map, Fields: InternFields([]Field{{Name: "key", Type: k}, {Name: "value", Type: v}})}
}

// KeyT and ValueT return the key and value types of a map type.
func (t T) KeyT() T   { return t.Fields.fs[0].Type }
func (t T) ValueT() T { return t.Fields.fs[1].Type }

// MapEntriesT returns the type a map is represented as: the array of its
// entries, struct<key K, value V>[].
func MapEntriesT(t T) T { return T{Kind: Array, Elem: Struct, Fields: t.Fields} }

// MapKeyAllowed reports whether k can be a map key type (RisingWave's:
// character varying and the integers).
func MapKeyAllowed(k T) bool { return k.Kind == Text || k.IsInteger() }

// mapString spells a map type as RisingWave does: map(character varying,integer).
func (t T) mapString() string {
	return "map(" + t.KeyT().String() + "," + t.ValueT().String() + ")"
}

// AppendMapText appends RisingWave's text output of map d:
// {a:1,b:NULL}, keys and values quoted as array elements are.
func AppendMapText(buf []byte, t T, d Datum) []byte {
	kt, vt := t.KeyT(), t.ValueT()
	buf = append(buf, '{')
	var tmp []byte
	for i, e := range d.Arr {
		if i > 0 {
			buf = append(buf, ',')
		}
		tmp = AppendText(tmp[:0], kt, e.Arr[0])
		buf = appendArrayElem(buf, tmp)
		buf = append(buf, ':')
		if e.Arr[1].Null {
			buf = append(buf, "NULL"...)
			continue
		}
		tmp = AppendText(tmp[:0], vt, e.Arr[1])
		buf = appendArrayElem(buf, tmp)
	}
	return append(buf, '}')
}

// parseMap refuses text input of maps, which RisingWave does not read.
func parseMap(t T, _ string) (Datum, error) {
	return Null, sqlerr.Unsupported("text input of type %s", t)
}
