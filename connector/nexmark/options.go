// Package nexmark generates the events of the Nexmark benchmark (an online
// auction: people register, open auctions and bid) as Arrow record batches,
// following the rules of the nexmark/nexmark generator and RisingWave's
// nexmark connector, deterministically: every value of event n is drawn
// from random streams seeded by n alone, so a reader that resumes from a
// checkpointed row number reproduces exactly the rows it would have
// produced.
//
// Options (strings, as given in CREATE SOURCE ... WITH (...)):
//
//	connector = 'nexmark'
//	nexmark.table.type = person|auction|bid   one kind of event; absent: every event, in
//	                                          RisingWave's combined form (event_type, person,
//	                                          auction, bid struct columns, date_time)
//	nexmark.event.num = N            events over all kinds (default: unbounded); a bid source
//	                                 of N events has the bids among event ids 0..N-1
//	nexmark.split.num = K            splits (default 1): split i has event ids i, i+K, ...
//	nexmark.max.chunk.size = N       rows per batch (default 1024)
//	nexmark.min.event.gap.in.ns = N  pacing per split: at least N ns between events (default 0:
//	                                 as fast as the consumer takes them)
//	nexmark.base.time = T            event time of event 0: milliseconds since 1970 or a
//	                                 timestamp (default 2015-07-15 00:00:00)
//	nexmark.event.rate = N           events per second of event time (default 10000): the
//	                                 spacing of timestamps, not pacing
package nexmark

import (
	"math"
	"strconv"
	"strings"

	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// Table is the kind of events a source produces.
type Table int

const (
	// Combined is every event, in RisingWave's combined form.
	Combined Table = iota
	Person
	Auction
	Bid
)

func (t Table) String() string {
	return [...]string{"combined", "person", "auction", "bid"}[t]
}

// Config is a parsed set of options.
type Config struct {
	Table Table
	// EventNum is the number of events over all kinds, or -1: unbounded.
	EventNum int64
	// Splits is the number of splits (at least 1).
	Splits int
	// ChunkSize is the number of rows per batch.
	ChunkSize int
	// MinEventGapNs paces each split: at least this many nanoseconds between
	// its events (0: unpaced).
	MinEventGapNs int64
	// BaseTimeMs is the event time of event 0, in milliseconds since 1970.
	BaseTimeMs int64
	// EventRate is the number of events per second of event time.
	EventRate int64
}

// DefaultBaseTimeMs is 2015-07-15 00:00:00 in milliseconds since 1970.
const DefaultBaseTimeMs = 1436918400000

// DefaultChunkSize is the default number of rows per batch.
const DefaultChunkSize = 1024

// ParseOptions reads the options of a nexmark source. Errors are 22023
// (invalid_parameter_value) naming the option.
func ParseOptions(opts map[string]string) (Config, error) {
	c := Config{EventNum: -1, Splits: 1, ChunkSize: DefaultChunkSize, BaseTimeMs: DefaultBaseTimeMs, EventRate: 10000}
	for k, v := range opts {
		v = strings.TrimSpace(v)
		var err error
		switch k {
		case "connector":
		case "nexmark.table.type":
			switch strings.ToLower(v) {
			case "person":
				c.Table = Person
			case "auction":
				c.Table = Auction
			case "bid":
				c.Table = Bid
			default:
				return c, sqlerr.New(sqlerr.InvalidParameterValue, "option nexmark.table.type: %q is not person, auction or bid", v)
			}
		case "nexmark.event.num":
			c.EventNum, err = integer(k, v, 0)
		case "nexmark.split.num":
			var n int64
			n, err = integer(k, v, 1)
			if err == nil && n > 1<<16 {
				err = sqlerr.New(sqlerr.InvalidParameterValue, "option %s: at most %d splits", k, 1<<16)
			}
			c.Splits = int(n)
		case "nexmark.max.chunk.size":
			var n int64
			n, err = integer(k, v, 1)
			if err == nil && n > 1<<20 {
				err = sqlerr.New(sqlerr.InvalidParameterValue, "option %s: at most %d rows", k, 1<<20)
			}
			c.ChunkSize = int(n)
		case "nexmark.min.event.gap.in.ns":
			c.MinEventGapNs, err = integer(k, v, 0)
		case "nexmark.event.rate":
			c.EventRate, err = integer(k, v, 1)
		case "nexmark.base.time":
			c.BaseTimeMs, err = baseTime(v)
		default:
			return c, sqlerr.New(sqlerr.InvalidParameterValue, "unknown nexmark option %q", k)
		}
		if err != nil {
			return c, err
		}
	}
	return c, nil
}

// integer reads a whole number option of at least lo.
func integer(key, v string, lo int64) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < lo {
		return 0, sqlerr.New(sqlerr.InvalidParameterValue, "option %s: %q is not an integer of at least %d", key, v, lo)
	}
	return n, nil
}

// baseTime reads milliseconds since 1970, or a timestamp.
func baseTime(v string) (int64, error) {
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return n, nil
	}
	d, err := types.ParseText(types.TimestampT, v)
	if err != nil || d.I < math.MinInt64/2 {
		return 0, sqlerr.New(sqlerr.InvalidParameterValue, "option nexmark.base.time: %q is neither milliseconds since 1970 nor a timestamp", v)
	}
	return floorDiv(d.I, 1000), nil
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}
