// Package textdec decodes text records (CSV lines, JSON objects) into
// datums of a relation's columns. The Kafka source decodes one record per
// message with it, the posix_fs source one record per line of a file.
package textdec

import "github.com/streamsql/streamsql/types"

// Column is a column records are decoded into, in the relation's order.
type Column struct {
	Name string
	Type types.T
}
