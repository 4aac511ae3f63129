package ir

import "github.com/streamsql/streamsql/types"

// Intervals PostgreSQL calls equal ('1 mon' and '30 days', '1 day' and
// '24:00:00') are one group, one distinct value and one join key, as
// PostgreSQL hashes intervals by their span. Grouping and join keys of type
// interval are therefore the span's canonical interval (FnIntervalKey), and
// a grouping outputs one of the group's own values (AggKeyValue).
const (
	// FnIntervalKey is the canonical interval of an interval's span: the
	// same for every interval of the same span (internal).
	FnIntervalKey = "$interval_key"
	// AggKeyValue is the value a grouping outputs for an interval key:
	// in a batch query the first value of the group it reads, as
	// PostgreSQL; in a view the group's value with the most months, then
	// days ('1 mon' over '30 days', '1 day' over '24:00:00'), which no
	// order of changes or restart alters.
	AggKeyValue = "$key_value"
)

func init() {
	def(FnIntervalKey, types.IntervalT, types.IntervalT)
}
