package types

//go:generate sh -c "go run gen_tznames.go > tznames.go"

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	// The tz database is compiled into every binary that formats or parses
	// times in a zone, so that zones work without /usr/share/zoneinfo.
	_ "time/tzdata"
)

// Zone is a time zone as PostgreSQL's TimeZone setting and AT TIME ZONE know
// it: a zone of the tz database (Europe/Berlin, with its history of offsets
// and daylight saving time) or a fixed offset. Zones are immutable and safe
// for concurrent use; LoadZone and ZoneAt return shared values.
type Zone struct {
	// name is the zone's name as SHOW TimeZone prints it.
	name string
	loc  *time.Location
	// fixed zones have one offset, off seconds east of UTC.
	fixed bool
	off   int
}

// UTC is the zone sessions start in.
var UTC = &Zone{name: "UTC", loc: time.UTC, fixed: true}

// Name is the zone's name as PostgreSQL shows it (SHOW TimeZone, the
// TimeZone ParameterStatus). LoadZone(z.Name()) returns an equal zone.
func (z *Zone) Name() string { return z.name }

// IsUTC reports whether the zone is UTC at every instant (UTC, GMT, +00):
// conversions in it change nothing.
func (z *Zone) IsUTC() bool { return z == nil || z.fixed && z.off == 0 }

// Location is the zone as a time.Location.
func (z *Zone) Location() *time.Location { return z.loc }

// maxZoneOffset bounds the offsets of fixed zones: PostgreSQL accepts less
// than a week (SET TIME ZONE 167); the tz database stays within 15 hours.
const maxZoneOffset = 168*3600 - 1

// OffsetAt returns the zone's offset east of UTC, in seconds, at the instant
// micros (microseconds since 1970-01-01 00:00 UTC).
func (z *Zone) OffsetAt(micros int64) int {
	if z.fixed {
		return z.off
	}
	_, off := time.Unix(FloorDiv(micros, microsPerSecond), 0).In(z.loc).Zone()
	return off
}

// AbbrevAt returns the zone's abbreviation at the instant micros ("CEST",
// "EST", "+0530"), as to_char's TZ pattern prints it.
func (z *Zone) AbbrevAt(micros int64) string {
	name, _ := time.Unix(FloorDiv(micros, microsPerSecond), 0).In(z.loc).Zone()
	return name
}

// ToLocal converts the instant micros to the zone's local wall-clock time
// (a timestamp without time zone, in microseconds).
func (z *Zone) ToLocal(micros int64) int64 {
	return micros + int64(z.OffsetAt(micros))*microsPerSecond
}

// FromLocal converts a local wall-clock time in the zone to an instant, as
// PostgreSQL does: a time that does not exist (skipped by a spring-forward
// transition) is read with the offset in force before the transition, so
// 02:30 on the day New York moves from 02:00 to 03:00 is 03:30 EDT; a time
// that exists twice (a fall-back transition) is the later instant, in the
// offset after the transition.
func (z *Zone) FromLocal(local int64) int64 {
	if z.fixed {
		return local - int64(z.off)*microsPerSecond
	}
	secs := FloorDiv(local, microsPerSecond)
	frac := local - secs*microsPerSecond
	return z.localSecsToUTC(secs)*microsPerSecond + frac
}

// zonePeriod is a span [start, end) of instants (Unix seconds) with one offset.
type zonePeriod struct {
	start, end int64
	off        int64
}

func (z *Zone) period(u int64) zonePeriod {
	t := time.Unix(u, 0).In(z.loc)
	_, off := t.Zone()
	s, e := t.ZoneBounds()
	p := zonePeriod{start: math.MinInt64, end: math.MaxInt64, off: int64(off)}
	if !s.IsZero() {
		p.start = s.Unix()
	}
	if !e.IsZero() {
		p.end = e.Unix()
	}
	return p
}

func (z *Zone) localSecsToUTC(l int64) int64 {
	// Every reading of l lies within a day of l - offset.
	const window = 2 * 86400
	_, off := time.Unix(l, 0).In(z.loc).Zone()
	u := l - int64(off)
	p := z.period(u)
	if u >= p.start && u < p.end && p.off == int64(off) &&
		(p.start == math.MinInt64 || u-p.start > window) && (p.end == math.MaxInt64 || p.end-u > window) {
		return u // far from any transition: the only reading
	}
	// Near a transition: look at every period around l.
	var ps [8]zonePeriod
	n := 0
	for at := l - window; n < len(ps); {
		p := z.period(at)
		ps[n] = p
		n++
		if p.end == math.MaxInt64 || p.end > l+window {
			break
		}
		at = p.end
	}
	best, found := int64(0), false
	for _, p := range ps[:n] {
		if u := l - p.off; u >= p.start && u < p.end && (!found || u > best) {
			best, found = u, true // the later of two readings
		}
	}
	if found {
		return best
	}
	for i := 0; i+1 < n; i++ {
		// A gap: l is past the end of period i in its offset and before the
		// start of period i+1 in the next.
		if b := ps[i].end; l-ps[i].off >= b && l-ps[i+1].off < b {
			return l - ps[i].off
		}
	}
	return l - int64(off)
}

// AppendOffset appends a zone offset as PostgreSQL prints it after a
// timestamptz: +02, -03:30, +00:53:28.
func AppendOffset(buf []byte, secs int) []byte {
	if secs < 0 {
		buf = append(buf, '-')
		secs = -secs
	} else {
		buf = append(buf, '+')
	}
	h, m, s := secs/3600, secs/60%60, secs%60
	if h >= 100 {
		buf = strconv.AppendInt(buf, int64(h), 10)
	} else {
		buf = append2(buf, h)
	}
	if m != 0 || s != 0 {
		buf = append(buf, ':')
		buf = append2(buf, m)
		if s != 0 {
			buf = append(buf, ':')
			buf = append2(buf, s)
		}
	}
	return buf
}

// AppendTimestampTZ appends the text of the timestamptz micros as it reads in
// zone z: 2024-03-31 03:30:00+02.
func AppendTimestampTZ(buf []byte, micros int64, z *Zone) []byte {
	off := 0
	if z != nil {
		off = z.OffsetAt(micros)
	}
	local := micros + int64(off)*microsPerSecond
	days := FloorDiv(local, microsPerDay)
	y, _, _ := CivilFromDays(days)
	buf = AppendTimestamp(buf, local, false)
	if y <= 0 {
		buf = buf[:len(buf)-len(" BC")]
	}
	buf = AppendOffset(buf, off)
	if y <= 0 {
		buf = append(buf, " BC"...)
	}
	return buf
}

// ParseTimestampTZ parses s, text input of timestamptz; a value without an
// explicit offset is a local time in z (see FromLocal).
func ParseTimestampTZ(s string, z *Zone) (int64, error) {
	if z.IsUTC() {
		return parseTimestamp(TimestampTZT, s)
	}
	dt, err := parseDateTime(TimestampTZT, s)
	if err != nil {
		return 0, err
	}
	if dt.hasZone {
		return parseTimestamp(TimestampTZT, s)
	}
	local, err := parseTimestamp(TimestampT, s)
	if err != nil {
		return 0, err
	}
	return z.FromLocal(local), nil
}

// ParseTextIn is ParseText with timestamptz input read in zone z.
func ParseTextIn(t T, s string, z *Zone) (Datum, error) {
	if t.Kind == TimestampTZ && !z.IsUTC() {
		v, err := ParseTimestampTZ(s, z)
		return DInt(v), err
	}
	return ParseText(t, s)
}

// ErrUnknownZone is returned by LoadZone and ZoneAt for a name that is no
// time zone.
var ErrUnknownZone = errors.New("unknown time zone")

// LoadZone returns the zone a TimeZone setting names, as PostgreSQL's SET
// TIME ZONE reads it: a number is hours east of UTC (-7, 5.5, '+03'); a
// name is a zone of the tz database, matched ignoring case (europe/berlin
// is Europe/Berlin); anything else must be a POSIX zone with a fixed offset
// west of UTC ('UTC+3' is three hours behind UTC, '<+05>-05' five ahead).
func LoadZone(name string) (*Zone, error) {
	return zoneCache.get(name, false)
}

// ZoneAt returns the zone AT TIME ZONE and timezone() name, as PostgreSQL
// reads it there: a time zone abbreviation first (PST, CET: fixed offsets),
// then a zone of the tz database, then a POSIX zone, where a bare number is
// hours west of UTC ('+03' is three hours behind).
func ZoneAt(name string) (*Zone, error) {
	return zoneCache.get(name, true)
}

// FixedZone returns the zone of a fixed offset secs east of UTC, named as
// PostgreSQL names it (SET TIME ZONE -7 is <-07>+07).
func FixedZone(secs int) (*Zone, error) {
	if secs < -maxZoneOffset || secs > maxZoneOffset {
		return nil, ErrUnknownZone
	}
	abs := secs
	if abs < 0 {
		abs = -abs
	}
	digits := string(AppendOffset(nil, abs)[1:])
	name := "<+" + digits + ">-" + digits
	if secs < 0 {
		name = "<-" + digits + ">+" + digits
	}
	return LoadZone(name)
}

// zoneCache keeps the zones looked up so far, by name as written and by the
// rule that read it (SET or AT TIME ZONE), so that per-row lookups of a zone
// name neither allocate nor parse.
var zoneCache = zoneMemo{m: map[zoneKey]*Zone{}}

type zoneKey struct {
	name string
	at   bool
}

type zoneMemo struct {
	mu sync.RWMutex
	m  map[zoneKey]*Zone
}

// maxCachedZones bounds the cache: zone names can come from data.
const maxCachedZones = 4096

func (c *zoneMemo) get(name string, at bool) (*Zone, error) {
	c.mu.RLock()
	z := c.m[zoneKey{name, at}]
	c.mu.RUnlock()
	if z != nil {
		return z, nil
	}
	z, err := lookupZone(name, at)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if len(c.m) < maxCachedZones {
		c.m[zoneKey{name, at}] = z
	}
	c.mu.Unlock()
	return z, nil
}

func lookupZone(name string, at bool) (*Zone, error) {
	s := strings.TrimSpace(name)
	if s == "" || len(s) > 255 {
		return nil, ErrUnknownZone
	}
	if at {
		if off, ok := zoneAbbrevs[strings.ToLower(s)]; ok {
			return &Zone{name: strings.ToUpper(s), loc: time.FixedZone(strings.ToUpper(s), off), fixed: true, off: off}, nil
		}
	} else if h, err := strconv.ParseFloat(s, 64); err == nil {
		secs := h * 3600
		if math.IsNaN(secs) || math.Abs(secs) > maxZoneOffset {
			return nil, ErrUnknownZone
		}
		return FixedZone(int(secs))
	}
	if canon, ok := zoneNameIndex()[strings.ToLower(s)]; ok {
		loc, err := time.LoadLocation(canon)
		if err != nil {
			return nil, ErrUnknownZone
		}
		z := &Zone{name: canon, loc: loc}
		if off, ok := fixedOffset(loc); ok {
			z.fixed, z.off = true, off
		}
		return z, nil
	}
	abbrev, off, ok := parsePOSIXFixed(s)
	if !ok {
		return nil, ErrUnknownZone
	}
	return &Zone{name: s, loc: time.FixedZone(abbrev, off), fixed: true, off: off}, nil
}

// fixedOffset reports whether loc never changes its offset (UTC, Etc/GMT+3).
func fixedOffset(loc *time.Location) (int, bool) {
	t := time.Unix(0, 0).In(loc)
	s, e := t.ZoneBounds()
	_, off := t.Zone()
	return off, s.IsZero() && e.IsZero()
}

var (
	zoneIndexOnce sync.Once
	zoneIndex     map[string]string
)

// zoneNameIndex maps the lower-case name of every zone of the tz database
// to its name.
func zoneNameIndex() map[string]string {
	zoneIndexOnce.Do(func() {
		names := strings.Fields(zoneNames)
		zoneIndex = make(map[string]string, len(names))
		for _, n := range names {
			zoneIndex[strings.ToLower(n)] = n
		}
	})
	return zoneIndex
}

// parsePOSIXFixed parses a POSIX TZ string without daylight saving rules:
// an optional name (letters, or anything in <>) and an offset west of UTC,
// [+-]hh[:mm[:ss]]. It returns the abbreviation and the offset east of UTC.
func parsePOSIXFixed(s string) (abbrev string, off int, ok bool) {
	i := 0
	switch {
	case s[0] == '<':
		j := strings.IndexByte(s, '>')
		if j < 0 {
			return "", 0, false
		}
		abbrev, i = s[1:j], j+1
	default:
		for i < len(s) && (s[i] >= 'a' && s[i] <= 'z' || s[i] >= 'A' && s[i] <= 'Z') {
			i++
		}
		abbrev = s[:i]
		if i > 0 && i < 3 {
			return "", 0, false
		}
	}
	rest := s[i:]
	if rest == "" {
		return "", 0, false
	}
	neg := false
	if rest[0] == '+' || rest[0] == '-' {
		neg = rest[0] == '-'
		rest = rest[1:]
	}
	parts := strings.Split(rest, ":")
	if len(parts) > 3 {
		return "", 0, false
	}
	secs := 0
	for k, p := range parts {
		if p == "" || len(p) > 3 || k > 0 && len(p) != 2 {
			return "", 0, false
		}
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 || k > 0 && v > 59 {
			return "", 0, false
		}
		secs += v * []int{3600, 60, 1}[k]
	}
	if secs > maxZoneOffset {
		return "", 0, false
	}
	if !neg {
		secs = -secs // POSIX offsets count west of UTC
	}
	if abbrev == "" {
		abbrev = string(AppendOffset(nil, secs))
	}
	return abbrev, secs, true
}

// zoneAbbrevs are time zone abbreviations of PostgreSQL's Default set that
// AT TIME ZONE and timezone() accept, with their offsets east of UTC.
var zoneAbbrevs = map[string]int{
	"utc": 0, "gmt": 0, "ut": 0, "z": 0, "zulu": 0, "wet": 0,
	"west": 3600, "bst": 3600, "cet": 3600, "met": 3600, "mez": 3600,
	"cest": 7200, "mest": 7200, "eet": 7200, "ist": 7200, "sast": 7200,
	"eest": 10800, "msk": 10800,
	"est": -5 * 3600, "edt": -4 * 3600, "cst": -6 * 3600, "cdt": -5 * 3600,
	"mst": -7 * 3600, "mdt": -6 * 3600, "pst": -8 * 3600, "pdt": -7 * 3600,
	"akst": -9 * 3600, "akdt": -8 * 3600, "hst": -10 * 3600,
	"ast": -4 * 3600, "adt": -3 * 3600, "nst": -(3*3600 + 1800), "ndt": -(2*3600 + 1800),
	"jst": 9 * 3600, "kst": 9 * 3600, "hkt": 8 * 3600, "awst": 8 * 3600,
	"acst": 9*3600 + 1800, "acdt": 10*3600 + 1800, "aest": 10 * 3600, "aedt": 11 * 3600,
	"nzst": 12 * 3600, "nzdt": 13 * 3600,
}

// NewColumnFormatterIn is NewColumnFormatter with timestamptz values printed
// in zone z (nil: UTC).
func NewColumnFormatterIn(t T, arr arrow.Array, z *Zone) ColumnFormatter {
	switch {
	case z.IsUTC():
	case t.Kind == TimestampTZ:
		vs := arr.(*array.Timestamp).TimestampValues()
		return func(buf []byte, i int) []byte { return AppendTimestampTZ(buf, int64(vs[i]), z) }
	case t.Kind == Array && t.ElemT().Kind == TimestampTZ:
		var tmp []byte
		return func(buf []byte, i int) []byte {
			buf = append(buf, '{')
			for j, e := range listDatum(t, arr, i).Arr {
				if j > 0 {
					buf = append(buf, ',')
				}
				if e.Null {
					buf = append(buf, "NULL"...)
					continue
				}
				tmp = AppendTimestampTZ(tmp[:0], e.I, z)
				buf = appendArrayElem(buf, tmp)
			}
			return append(buf, '}')
		}
	}
	return NewColumnFormatter(t, arr)
}

// parseZoneName reads the rest of a tz database name that starts with the
// letters w just read (europe/berlin, america/port-au-prince) and returns
// its zone; nil, with c unmoved, if there is none.
func parseZoneName(c *parseCursor, w string) *Zone {
	start := c.i - len(w)
	j := c.i
	for j < len(c.s) && (c.s[j] >= 'a' && c.s[j] <= 'z' || c.s[j] >= '0' && c.s[j] <= '9' ||
		c.s[j] == '/' || c.s[j] == '_' || c.s[j] == '-' || c.s[j] == '+') {
		j++
	}
	canon, ok := zoneNameIndex()[c.s[start:j]]
	if !ok {
		return nil
	}
	z, err := LoadZone(canon)
	if err != nil {
		return nil
	}
	c.i = j
	return z
}
