package nexmark

import (
	"math"
	"math/bits"
	"slices"
	"strconv"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/types"
)

// The proportions of the event kinds in every group of 50 events: event n
// is a person if n%50 == 0, an auction if 1 <= n%50 <= 3, else a bid.
const (
	groupSize      = 50
	auctionsPerGrp = 3
	firstPersonID  = 1000
	firstAuctionID = 1000
	firstCategory  = 10
	numCategories  = 5
	activePeople   = 1000
	personIDLead   = 10
	inFlight       = 100 // auctions in flight
	auctionIDLead  = 10
	hotRatio       = 100 // hot sellers, bidders and auctions are multiples of this
	// auctionHorizon is the number of events over which inFlight auctions
	// are opened: an auction's expected length is their event-time span.
	auctionHorizon = inFlight * groupSize / auctionsPerGrp
	numChannels    = 10000
)

// kindOf returns the kind of event n.
func kindOf(n int64) Table {
	switch off := n % groupSize; {
	case off == 0:
		return Person
	case off <= auctionsPerGrp:
		return Auction
	}
	return Bid
}

// lastPerson is the base-0 id of the last person opened at or before
// event n; lastAuction that of the last auction (event n's own, for an
// auction; the group's last, for a bid).
func lastPerson(n int64) int64 { return n / groupSize }

func lastAuction(n int64) int64 {
	g, off := n/groupSize, n%groupSize
	switch {
	case off == 0:
		return g*auctionsPerGrp - 1
	case off <= auctionsPerGrp:
		return g*auctionsPerGrp + off - 1
	}
	return g*auctionsPerGrp + auctionsPerGrp - 1
}

// Generator produces the rows of a nexmark source. It is immutable and
// safe for concurrent use.
type Generator struct {
	cfg    Config
	schema *arrow.Schema
	// splits[i] lists the steps j in [0, period) whose events i + j*K are of
	// the source's kind; the pattern repeats every period steps.
	splits []splitPlan
	period int64
}

type splitPlan struct{ steps []int64 }

// New returns the generator of cfg.
func New(cfg Config) *Generator {
	g := &Generator{cfg: cfg}
	k := int64(cfg.Splits)
	g.period = groupSize / gcd(k, groupSize)
	g.splits = make([]splitPlan, cfg.Splits)
	for i := range g.splits {
		for j := int64(0); j < g.period; j++ {
			if cfg.Table == Combined || kindOf(int64(i)+j*k) == cfg.Table {
				g.splits[i].steps = append(g.splits[i].steps, j)
			}
		}
	}
	cols := Columns(cfg.Table)
	fields := make([]arrow.Field, 0, len(cols)+1)
	for _, c := range cols {
		fields = append(fields, arrow.Field{Name: c.Name, Type: c.Type.ArrowType(), Nullable: true})
	}
	fields = append(fields, arrow.Field{Name: "_row_id", Type: arrow.PrimitiveTypes.Int64})
	g.schema = arrow.NewSchema(fields, nil)
	return g
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// Config returns the generator's configuration.
func (g *Generator) Config() Config { return g.cfg }

// Schema returns the Arrow schema of the batches: the columns of the table
// type, then the event id as a bigint (unique over all splits).
func (g *Generator) Schema() *arrow.Schema { return g.schema }

// Splits returns the number of splits.
func (g *Generator) Splits() int { return g.cfg.Splits }

// EventID returns the event id of row r of split s.
func (g *Generator) EventID(s int, r int64) int64 {
	steps := g.splits[s].steps
	m := int64(len(steps))
	return int64(s) + int64(g.cfg.Splits)*((r/m)*g.period+steps[r%m])
}

// SplitRows returns the number of rows of split s, or -1 if it is
// unbounded.
func (g *Generator) SplitRows(s int) int64 {
	steps := g.splits[s].steps
	if len(steps) == 0 {
		return 0
	}
	if g.cfg.EventNum < 0 {
		return -1
	}
	// The split's events are s + j*K for j < J.
	k := int64(g.cfg.Splits)
	if g.cfg.EventNum <= int64(s) {
		return 0
	}
	j := (g.cfg.EventNum - int64(s) + k - 1) / k
	rows := (j / g.period) * int64(len(steps))
	for _, st := range steps {
		if st < j%g.period {
			rows++
		}
	}
	return rows
}

// RowsPerSecond is the pacing of the whole source (all splits), or 0 if
// it is unpaced.
func (g *Generator) RowsPerSecond() float64 {
	if g.cfg.MinEventGapNs == 0 {
		return 0
	}
	frac := 1.0
	switch g.cfg.Table {
	case Person:
		frac = 1.0 / groupSize
	case Auction:
		frac = float64(auctionsPerGrp) / groupSize
	case Bid:
		frac = float64(groupSize-1-auctionsPerGrp) / groupSize
	}
	return 1e9 / float64(g.cfg.MinEventGapNs) * float64(g.cfg.Splits) * frac
}

// ChunkSize is the number of rows per batch.
func (g *Generator) ChunkSize() int { return g.cfg.ChunkSize }

// timestampUs is the event time of event n in microseconds since 1970: the
// events are spaced 1/rate seconds apart, at millisecond granularity.
func (g *Generator) timestampUs(n int64) int64 {
	return (g.cfg.BaseTimeMs + n*1000/g.cfg.EventRate) * 1000
}

// Batch returns rows [first, first+n) of split s (fewer at the end of a
// bounded split), each followed by its event id. The caller releases it.
func (g *Generator) Batch(mem memory.Allocator, s int, first, n int64) arrow.RecordBatch {
	if total := g.SplitRows(s); total >= 0 && first+n > total {
		n = max(total-first, 0)
	}
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = g.EventID(s, first+int64(i))
	}
	return g.BatchOf(mem, ids)
}

// BatchOf returns the rows of the events ids, which must all be of the
// generator's table type (any, for the combined form). The caller releases
// it.
func (g *Generator) BatchOf(mem memory.Allocator, ids []int64) arrow.RecordBatch {
	var cols []arrow.Array
	switch g.cfg.Table {
	case Person:
		cols = g.personColumns(mem, ids)
	case Auction:
		cols = g.auctionColumns(mem, ids)
	case Bid:
		cols = g.bidColumns(mem, ids)
	default:
		cols = g.combinedColumns(mem, ids)
	}
	cols = append(cols, int64Column(mem, ids, func(n int64) int64 { return n }))
	rec := array.NewRecordBatch(g.schema, cols, int64(len(ids)))
	for _, c := range cols {
		c.Release()
	}
	return rec
}

// combinedColumns builds RisingWave's combined form: the event type, a
// struct per kind (NULL on the other kinds' rows) and the event time.
func (g *Generator) combinedColumns(mem memory.Allocator, ids []int64) []arrow.Array {
	masked := make([]int64, len(ids))
	mask := func(kind Table) []int64 {
		for i, n := range ids {
			masked[i] = n
			if kindOf(n) != kind {
				masked[i] = -1
			}
		}
		return masked
	}
	cols := []arrow.Array{int64Column(mem, ids, func(n int64) int64 { return int64(kindOf(n)) - 1 })}
	for i, kind := range []Table{Person, Auction, Bid} {
		m := mask(kind)
		var children []arrow.Array
		switch kind {
		case Person:
			children = g.personColumns(mem, m)
		case Auction:
			children = g.auctionColumns(mem, m)
		default:
			children = g.bidColumns(mem, m)
		}
		cols = append(cols, structColumn(mem, g.schema.Field(1+i).Type, m, children))
	}
	cols = append(cols, g.timeColumn(mem, ids, 0))
	return cols
}

// structColumn assembles a struct column from its children, NULL where
// ids[i] < 0; it takes the children's references.
func structColumn(mem memory.Allocator, dt arrow.DataType, ids []int64, children []arrow.Array) arrow.Array {
	valid := memory.NewResizableBuffer(mem)
	valid.Resize(int(bitutil.BytesForBits(int64(len(ids)))))
	nulls := 0
	bm := valid.Bytes()
	for i, n := range ids {
		if n >= 0 {
			bitutil.SetBit(bm, i)
		} else {
			bitutil.ClearBit(bm, i)
			nulls++
		}
	}
	data := make([]arrow.ArrayData, len(children))
	for i, c := range children {
		data[i] = c.Data()
	}
	d := array.NewData(dt, len(ids), []*memory.Buffer{valid}, data, nulls, 0)
	valid.Release()
	for _, c := range children {
		c.Release()
	}
	arr := array.MakeFromData(d)
	d.Release()
	return arr
}

// In the column builders below, an id < 0 stands for a NULL row (another
// kind's row in the combined form). Each column draws from its own random
// stream, seeded by the event id and the column, so that columns are built
// one at a time.

func int64Column(mem memory.Allocator, ids []int64, f func(int64) int64) arrow.Array {
	b := array.NewInt64Builder(mem)
	defer b.Release()
	b.Reserve(len(ids))
	for _, n := range ids {
		if n < 0 {
			b.UnsafeAppendBoolToBitmap(false)
			continue
		}
		b.UnsafeAppend(f(n))
	}
	return b.NewArray()
}

// timeColumn is the event time of each event plus, if horizon, a random
// auction length.
func (g *Generator) timeColumn(mem memory.Allocator, ids []int64, salt uint64) arrow.Array {
	b := array.NewTimestampBuilder(mem, types.TimestampT.ArrowType().(*arrow.TimestampType))
	defer b.Release()
	b.Reserve(len(ids))
	for _, n := range ids {
		if n < 0 {
			b.UnsafeAppendBoolToBitmap(false)
			continue
		}
		ts := g.timestampUs(n)
		if salt != 0 {
			// An auction lasts 1 + uniform[0, 2*horizon) milliseconds, where
			// horizon is the event-time span of the next auctionHorizon events.
			horizonMs := (g.timestampUs(n+auctionHorizon) - ts) / 1000
			r := newRNG(n, salt)
			ts += (1 + r.intn(max(2*horizonMs, 1))) * 1000
		}
		b.UnsafeAppend(arrow.Timestamp(ts))
	}
	return b.NewArray()
}

// Salts of the columns' random streams.
const (
	saltPersonName = iota + 1
	saltEmail
	saltCard
	saltCity
	saltState
	saltPersonExtra
	saltItem
	saltDesc
	saltPrice
	saltExpires
	saltSeller
	saltCategory
	saltAuctionExtra
	saltBidAuction
	saltBidder
	saltBidPrice
	saltChannel
	saltBidExtra
)

var (
	firstNames = []string{"Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate", "Julie", "Sarah", "Deiter", "Walter"}
	lastNames  = []string{"Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith", "Jones", "Noris"}
	cities     = []string{"Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland", "Bend", "Redmond", "Seattle", "Kent", "Cheyenne"}
	states     = []string{"az", "ca", "id", "or", "wa", "wy"}
)

// stringColumn builds a text column; f appends event n's value to buf.
func stringColumn(mem memory.Allocator, ids []int64, avg int, f func(buf []byte, n int64) []byte) arrow.Array {
	b := array.NewStringBuilder(mem)
	defer b.Release()
	b.Reserve(len(ids))
	b.ReserveData(len(ids) * avg)
	buf := make([]byte, 0, 512)
	for _, n := range ids {
		if n < 0 {
			b.AppendNull()
			continue
		}
		buf = f(buf[:0], n)
		b.BinaryBuilder.Append(buf)
	}
	return b.NewArray()
}

func (g *Generator) personColumns(mem memory.Allocator, ids []int64) []arrow.Array {
	name := func(buf []byte, n int64) []byte {
		r := newRNG(n, saltPersonName)
		buf = append(buf, firstNames[r.intn(int64(len(firstNames)))]...)
		buf = append(buf, ' ')
		return append(buf, lastNames[r.intn(int64(len(lastNames)))]...)
	}
	email := func(buf []byte, n int64) []byte {
		r := newRNG(n, saltEmail)
		buf = r.appendString(buf, 7)
		buf = append(buf, '@')
		buf = r.appendString(buf, 5)
		return append(buf, ".com"...)
	}
	card := func(buf []byte, n int64) []byte {
		r := newRNG(n, saltCard)
		for i := 0; i < 4; i++ {
			if i > 0 {
				buf = append(buf, ' ')
			}
			v := r.intn(10000)
			buf = append(buf, byte('0'+v/1000), byte('0'+v/100%10), byte('0'+v/10%10), byte('0'+v%10))
		}
		return buf
	}
	city := func(buf []byte, n int64) []byte {
		r := newRNG(n, saltCity)
		return append(buf, cities[r.intn(int64(len(cities)))]...)
	}
	state := func(buf []byte, n int64) []byte {
		r := newRNG(n, saltState)
		return append(buf, states[r.intn(int64(len(states)))]...)
	}
	extra := func(buf []byte, n int64) []byte {
		// The size of the other fields: two numbers, the name, the email
		// (7@5.com), the card number, the city and the state.
		rn, rc := newRNG(n, saltPersonName), newRNG(n, saltCity)
		first := len(firstNames[rn.intn(int64(len(firstNames)))])
		last := len(lastNames[rn.intn(int64(len(lastNames)))])
		size := 16 + first + 1 + last + 17 + 19 + len(cities[rc.intn(int64(len(cities)))]) + 2
		r := newRNG(n, saltPersonExtra)
		return r.appendExtra(buf, size, 200)
	}
	return []arrow.Array{
		int64Column(mem, ids, func(n int64) int64 { return lastPerson(n) + firstPersonID }),
		stringColumn(mem, ids, 12, name),
		stringColumn(mem, ids, 12, email),
		stringColumn(mem, ids, 19, card),
		stringColumn(mem, ids, 8, city),
		stringColumn(mem, ids, 2, state),
		g.timeColumn(mem, ids, 0),
		stringColumn(mem, ids, 150, extra),
	}
}

func (g *Generator) auctionColumns(mem memory.Allocator, ids []int64) []arrow.Array {
	// The item name has 3 to 19 letters, the description 3 to 99; the
	// first draw of each stream is the length.
	itemLen := func(r *rng) int { return 3 + int(r.intn(20-3)) }
	descLen := func(r *rng) int { return 3 + int(r.intn(100-3)) }
	item := func(buf []byte, n int64) []byte {
		r := newRNG(n, saltItem)
		return r.appendString(buf, itemLen(&r))
	}
	desc := func(buf []byte, n int64) []byte {
		r := newRNG(n, saltDesc)
		return r.appendString(buf, descLen(&r))
	}
	extra := func(buf []byte, n int64) []byte {
		ri, rd := newRNG(n, saltItem), newRNG(n, saltDesc)
		size := 7*8 + itemLen(&ri) + descLen(&rd)
		r := newRNG(n, saltAuctionExtra)
		return r.appendExtra(buf, size, 500)
	}
	return []arrow.Array{
		int64Column(mem, ids, func(n int64) int64 { return lastAuction(n) + firstAuctionID }),
		stringColumn(mem, ids, 12, item),
		stringColumn(mem, ids, 52, desc),
		int64Column(mem, ids, func(n int64) int64 { r := newRNG(n, saltPrice); return r.price() }),
		int64Column(mem, ids, func(n int64) int64 {
			r := newRNG(n, saltPrice)
			initial := r.price()
			return initial + r.price()
		}),
		g.timeColumn(mem, ids, 0),
		g.timeColumn(mem, ids, saltExpires),
		int64Column(mem, ids, func(n int64) int64 {
			r := newRNG(n, saltSeller)
			if r.intn(4) > 0 {
				return (lastPerson(n)/hotRatio)*hotRatio + firstPersonID
			}
			return r.recentPerson(n) + firstPersonID
		}),
		int64Column(mem, ids, func(n int64) int64 { r := newRNG(n, saltCategory); return firstCategory + r.intn(numCategories) }),
		stringColumn(mem, ids, 400, extra),
	}
}

func (g *Generator) bidColumns(mem memory.Allocator, ids []int64) []arrow.Array {
	urls := channelURLs()
	channel := func(n int64) (name string, j int64, url string) {
		r := newRNG(n, saltChannel)
		if r.intn(2) > 0 {
			i := r.intn(int64(len(hotChannels)))
			return hotChannels[i], -1, urls.hot[i]
		}
		j = r.intn(numChannels)
		return "", j, urls.channel[j]
	}
	channelText := func(buf []byte, n int64) []byte {
		name, j, _ := channel(n)
		if j < 0 {
			return append(buf, name...)
		}
		return strconv.AppendInt(append(buf, "channel-"...), j, 10)
	}
	url := func(buf []byte, n int64) []byte {
		_, _, u := channel(n)
		return append(buf, u...)
	}
	extra := func(buf []byte, n int64) []byte {
		name, j, u := channel(n)
		size := 4*8 + len(name) + len(u)
		if j >= 0 {
			size += len("channel-") + digits(j)
		}
		r := newRNG(n, saltBidExtra)
		return r.appendExtra(buf, size, 100)
	}
	return []arrow.Array{
		int64Column(mem, ids, func(n int64) int64 {
			r := newRNG(n, saltBidAuction)
			last := lastAuction(n)
			if r.intn(2) > 0 {
				return (last/hotRatio)*hotRatio + firstAuctionID
			}
			lo := max(last-inFlight, 0)
			return lo + r.intn(last-lo+1+auctionIDLead) + firstAuctionID
		}),
		int64Column(mem, ids, func(n int64) int64 {
			r := newRNG(n, saltBidder)
			if r.intn(4) > 0 {
				return (lastPerson(n)/hotRatio)*hotRatio + 1 + firstPersonID
			}
			return r.recentPerson(n) + firstPersonID
		}),
		int64Column(mem, ids, func(n int64) int64 { r := newRNG(n, saltBidPrice); return r.price() }),
		stringColumn(mem, ids, 10, channelText),
		stringColumn(mem, ids, 60, url),
		g.timeColumn(mem, ids, 0),
		stringColumn(mem, ids, 20, extra),
	}
}

// digits is the number of decimal digits of j >= 0.
func digits(j int64) int {
	d := 1
	for ; j >= 10; j /= 10 {
		d++
	}
	return d
}

var hotChannels = []string{"Google", "Facebook", "Baidu", "Apple"}

type urlTable struct {
	hot     []string
	channel []string
}

// channelURLs returns the fixed URLs of the hot channels and of channel-j:
// https://www.nexmark.com/<5>/<5>/<5>/item.htm?query=1 with random parts,
// which for 9 channels in 10 carries &channel_id=<j's bits reversed>.
var channelURLs = sync.OnceValue(func() *urlTable {
	t := &urlTable{}
	base := func(r *rng) []byte {
		buf := append([]byte(nil), "https://www.nexmark.com/"...)
		for i := 0; i < 3; i++ {
			buf = r.appendString(buf, 5)
			buf = append(buf, '/')
		}
		return append(buf, "item.htm?query=1"...)
	}
	for i := range hotChannels {
		r := newRNG(int64(i), 0x486f74)
		t.hot = append(t.hot, string(base(&r)))
	}
	t.channel = make([]string, numChannels)
	for j := range t.channel {
		r := newRNG(int64(j), 0x4368616e)
		u := base(&r)
		if r.intn(10) > 0 {
			id := int64(int32(bits.Reverse32(uint32(j))))
			if id < 0 {
				id = -id
			}
			u = strconv.AppendInt(append(u, "&channel_id="...), id, 10)
		}
		t.channel[j] = string(u)
	}
	return t
})

// rng is a splitmix64 stream.
type rng uint64

func newRNG(n int64, salt uint64) rng { return rng(mix(uint64(n), salt)) }

func mix(a, b uint64) uint64 {
	z := a*0xd1b54a32d192ed03 + b*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func (r *rng) next() uint64 {
	*r += 0x9e3779b97f4a7c15
	z := uint64(*r)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// intn returns a uniform value in [0, n), n > 0.
func (r *rng) intn(n int64) int64 {
	hi, _ := bits.Mul64(r.next(), uint64(n))
	return int64(hi)
}

// price returns a log-uniform price in cents, 100 to 10^8.
func (r *rng) price() int64 {
	u := float64(r.next()>>11) / (1 << 53)
	return int64(math.Round(math.Exp(u*6*math.Ln10) * 100))
}

// recentPerson returns a uniform base-0 person id among the last
// activePeople people opened by event n and the personIDLead next ones.
func (r *rng) recentPerson(n int64) int64 {
	people := lastPerson(n) + 1
	active := min(people, activePeople)
	return people - active + r.intn(active+personIDLead)
}

// letters32 maps five random bits to a lower-case letter.
const letters32 = "abcdefghijklmnopqrstuvwxyzaeioun"

// appendString appends n random lower-case letters.
func (r *rng) appendString(buf []byte, n int) []byte {
	buf = slices.Grow(buf, n)
	out := buf[len(buf) : len(buf)+n]
	for i := 0; i < n; {
		x := r.next()
		for k := 0; k < 12 && i < n; k++ {
			out[i] = letters32[x&31]
			x >>= 5
			i++
		}
	}
	return buf[:len(buf)+n]
}

// appendExtra appends the padding that brings a row of size bytes to avg
// bytes on average: avg-size ± 20%, nothing if the row is already larger.
func (r *rng) appendExtra(buf []byte, size, avg int) []byte {
	if size >= avg {
		return buf
	}
	want := avg - size
	delta := int(math.Round(float64(want) * 0.2))
	n := want - delta
	if delta > 0 {
		n += int(r.intn(int64(2 * delta)))
	}
	return r.appendString(buf, n)
}
