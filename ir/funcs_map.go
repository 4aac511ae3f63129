package ir

import (
	"github.com/streamsql/streamsql/types"
)

// FnMapLiteral is MAP {k1: v1, ...}: the dialect turns it into a call of
// this name with the keys and values alternating.
const FnMapLiteral = "_mp"

// mapSig is the signature of a map function: args has a letter per
// argument ('m' the map, 'k' a key, 'v' a value) and result derives the
// result type from the map type.
type mapSig struct {
	Args   string
	Result func(m types.T) types.T
	strict bool
}

var MapFuncs = map[string]*mapSig{
	"map_access":   {Args: "mk", Result: types.T.ValueT, strict: true},
	"map_keys":     {Args: "m", Result: func(m types.T) types.T { return types.ArrayOf(m.KeyT()) }, strict: true},
	"map_values":   {Args: "m", Result: func(m types.T) types.T { return types.ArrayOf(m.ValueT()) }, strict: true},
	"map_entries":  {Args: "m", Result: types.MapEntriesT, strict: true},
	"map_length":   {Args: "m", Result: func(types.T) types.T { return types.Int32T }, strict: true},
	"map_contains": {Args: "mk", Result: func(types.T) types.T { return types.BoolT }, strict: true},
	"map_cat":      {Args: "mm", Result: func(m types.T) types.T { return m }},
	"map_insert":   {Args: "mkv", Result: func(m types.T) types.T { return m }},
	"map_delete":   {Args: "mk", Result: func(m types.T) types.T { return m }},
	// The constructors, typed by bindMapConstructor.
	FnMapLiteral:          {strict: false},
	"map_from_key_values": {strict: true},
	"map_from_entries":    {strict: true},
}
