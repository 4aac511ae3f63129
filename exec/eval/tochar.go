package eval

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// This file is PostgreSQL's formatting.c for dates and times: the template
// patterns of to_char(timestamp|timestamptz|interval, text) and of
// to_timestamp(text, text) and to_date(text, text) (see totimestamp.go).

const codeInvalidDatetimeFormat = "22007"

var errIntervalFormat = sqlerr.New(codeInvalidDatetimeFormat, "invalid format specification for an interval value").
	WithHint("Intervals are not tied to specific calendar dates.")

// dchID identifies a date/time template pattern.
type dchID uint8

const (
	dchAD dchID = iota + 1 // AD, BC and their spellings
	dchAM                  // AM, PM and their spellings
	dchCC
	dchDay // DAY, Day, day
	dchDDD
	dchDD
	dchDY // DY, Dy, dy
	dchD
	dchFF // FF1..FF6 (width in fmtKeyword.n)
	dchFX
	dchHH24
	dchHH12 // HH and HH12
	dchIDDD
	dchIsoDow
	dchIW
	dchIYYY
	dchIYY
	dchIY
	dchI
	dchJ
	dchMI
	dchMM
	dchMonth // MONTH, Month, month
	dchMon   // MON, Mon, mon
	dchMS
	dchOF
	dchQ
	dchRM
	dchSSSS
	dchSS
	dchTZH
	dchTZM
	dchTZ
	dchUS
	dchWW
	dchW
	dchYComma // Y,YYY
	dchYYYY
	dchYYY
	dchYY
	dchY
)

// textCase is how a pattern spells its text: as the keyword is written
// (MONTH, Month, month; AM, am; A.M., a.m.).
type textCase uint8

const (
	caseUpper textCase = iota
	caseTitle
	caseLower
)

// fmtKeyword is one template pattern.
type fmtKeyword struct {
	name string
	id   dchID
	// digit patterns print numbers (TH applies to them).
	digit bool
	tc    textCase
	// dots marks A.M./A.D. spellings; n is FFn's width.
	dots bool
	n    int
}

// dchKeywords lists the patterns in PostgreSQL's order: at a position the
// first one that matches is taken, so longer patterns come first.
var dchKeywords = []fmtKeyword{
	{name: "A.D.", id: dchAD, dots: true}, {name: "A.M.", id: dchAM, dots: true},
	{name: "AD", id: dchAD}, {name: "AM", id: dchAM},
	{name: "B.C.", id: dchAD, dots: true}, {name: "BC", id: dchAD},
	{name: "CC", id: dchCC, digit: true},
	{name: "DAY", id: dchDay}, {name: "DDD", id: dchDDD, digit: true}, {name: "DD", id: dchDD, digit: true},
	{name: "DY", id: dchDY}, {name: "Day", id: dchDay, tc: caseTitle}, {name: "Dy", id: dchDY, tc: caseTitle},
	{name: "D", id: dchD, digit: true},
	{name: "FF1", id: dchFF, n: 1}, {name: "FF2", id: dchFF, n: 2}, {name: "FF3", id: dchFF, n: 3},
	{name: "FF4", id: dchFF, n: 4}, {name: "FF5", id: dchFF, n: 5}, {name: "FF6", id: dchFF, n: 6},
	{name: "FX", id: dchFX},
	{name: "HH24", id: dchHH24, digit: true}, {name: "HH12", id: dchHH12, digit: true}, {name: "HH", id: dchHH12, digit: true},
	{name: "IDDD", id: dchIDDD, digit: true}, {name: "ID", id: dchIsoDow, digit: true}, {name: "IW", id: dchIW, digit: true},
	{name: "IYYY", id: dchIYYY, digit: true}, {name: "IYY", id: dchIYY, digit: true}, {name: "IY", id: dchIY, digit: true},
	{name: "I", id: dchI, digit: true},
	{name: "J", id: dchJ, digit: true},
	{name: "MI", id: dchMI, digit: true}, {name: "MM", id: dchMM, digit: true},
	{name: "MONTH", id: dchMonth}, {name: "MON", id: dchMon}, {name: "MS", id: dchMS, digit: true},
	{name: "Month", id: dchMonth, tc: caseTitle}, {name: "Mon", id: dchMon, tc: caseTitle},
	{name: "OF", id: dchOF},
	{name: "P.M.", id: dchAM, dots: true}, {name: "PM", id: dchAM},
	{name: "Q", id: dchQ, digit: true},
	{name: "RM", id: dchRM},
	{name: "SSSSS", id: dchSSSS, digit: true}, {name: "SSSS", id: dchSSSS, digit: true}, {name: "SS", id: dchSS, digit: true},
	{name: "TZH", id: dchTZH}, {name: "TZM", id: dchTZM, digit: true}, {name: "TZ", id: dchTZ},
	{name: "US", id: dchUS, digit: true},
	{name: "WW", id: dchWW, digit: true}, {name: "W", id: dchW, digit: true},
	{name: "Y,YYY", id: dchYComma, digit: true}, {name: "YYYY", id: dchYYYY, digit: true},
	{name: "YYY", id: dchYYY, digit: true}, {name: "YY", id: dchYY, digit: true}, {name: "Y", id: dchY, digit: true},
	{name: "a.d.", id: dchAD, dots: true, tc: caseLower}, {name: "a.m.", id: dchAM, dots: true, tc: caseLower},
	{name: "ad", id: dchAD, tc: caseLower}, {name: "am", id: dchAM, tc: caseLower},
	{name: "b.c.", id: dchAD, dots: true, tc: caseLower}, {name: "bc", id: dchAD, tc: caseLower},
	{name: "cc", id: dchCC, digit: true},
	{name: "day", id: dchDay, tc: caseLower}, {name: "ddd", id: dchDDD, digit: true}, {name: "dd", id: dchDD, digit: true},
	{name: "dy", id: dchDY, tc: caseLower}, {name: "d", id: dchD, digit: true},
	{name: "ff1", id: dchFF, n: 1}, {name: "ff2", id: dchFF, n: 2}, {name: "ff3", id: dchFF, n: 3},
	{name: "ff4", id: dchFF, n: 4}, {name: "ff5", id: dchFF, n: 5}, {name: "ff6", id: dchFF, n: 6},
	{name: "fx", id: dchFX},
	{name: "hh24", id: dchHH24, digit: true}, {name: "hh12", id: dchHH12, digit: true}, {name: "hh", id: dchHH12, digit: true},
	{name: "iddd", id: dchIDDD, digit: true}, {name: "id", id: dchIsoDow, digit: true}, {name: "iw", id: dchIW, digit: true},
	{name: "iyyy", id: dchIYYY, digit: true}, {name: "iyy", id: dchIYY, digit: true}, {name: "iy", id: dchIY, digit: true},
	{name: "i", id: dchI, digit: true},
	{name: "j", id: dchJ, digit: true},
	{name: "mi", id: dchMI, digit: true}, {name: "mm", id: dchMM, digit: true},
	{name: "month", id: dchMonth, tc: caseLower}, {name: "mon", id: dchMon, tc: caseLower}, {name: "ms", id: dchMS, digit: true},
	{name: "of", id: dchOF},
	{name: "p.m.", id: dchAM, dots: true, tc: caseLower}, {name: "pm", id: dchAM, tc: caseLower},
	{name: "q", id: dchQ, digit: true},
	{name: "rm", id: dchRM, tc: caseLower},
	{name: "sssss", id: dchSSSS, digit: true}, {name: "ssss", id: dchSSSS, digit: true}, {name: "ss", id: dchSS, digit: true},
	{name: "tzh", id: dchTZH}, {name: "tzm", id: dchTZM, digit: true}, {name: "tz", id: dchTZ, tc: caseLower},
	{name: "us", id: dchUS, digit: true},
	{name: "ww", id: dchWW, digit: true}, {name: "w", id: dchW, digit: true},
	{name: "y,yyy", id: dchYComma, digit: true}, {name: "yyyy", id: dchYYYY, digit: true},
	{name: "yyy", id: dchYYY, digit: true}, {name: "yy", id: dchYY, digit: true}, {name: "y", id: dchY, digit: true},
}

// fmtNode is one parsed element of a template: a pattern with its
// modifiers, or literal text.
type fmtNode struct {
	key *fmtKeyword
	lit string
	// fm (FM prefix) suppresses padding; tm (TM prefix) too, for names; th
	// (TH or th suffix) appends an ordinal suffix, thLower in lower case.
	fm, tm, th, thLower bool
}

// formatCache holds the last parsed template of a kernel context.
type formatCache struct {
	src   string
	num   bool
	nodes []fmtNode
	desc  numDesc
}

func (k *kctx) dchFormat(f string) []fmtNode {
	c := &k.format
	if c.nodes == nil || c.num || c.src != f {
		c.src, c.num, c.nodes = f, false, parseDCH(f)
	}
	return c.nodes
}

// parseDCH parses a date/time template as PostgreSQL's parse_format does.
func parseDCH(f string) []fmtNode {
	nodes := []fmtNode{}
	for i := 0; i < len(f); {
		var n fmtNode
		for {
			switch {
			case strings.HasPrefix(f[i:], "FM") || strings.HasPrefix(f[i:], "fm"):
				n.fm = true
			case strings.HasPrefix(f[i:], "TM") || strings.HasPrefix(f[i:], "tm"):
				n.tm = true
			default:
				goto keyword
			}
			i += 2
		}
	keyword:
		if kw := matchDCH(f[i:]); kw != nil {
			n.key = kw
			i += len(kw.name)
			switch {
			case strings.HasPrefix(f[i:], "TH"):
				n.th = true
				i += 2
			case strings.HasPrefix(f[i:], "th"):
				n.th, n.thLower = true, true
				i += 2
			}
			if strings.HasPrefix(f[i:], "SP") || strings.HasPrefix(f[i:], "sp") {
				i += 2
			}
			nodes = append(nodes, n)
			continue
		}
		if i >= len(f) {
			break
		}
		switch c := f[i]; {
		case c == '"':
			var b strings.Builder
			for i++; i < len(f) && f[i] != '"'; i++ {
				if f[i] == '\\' && i+1 < len(f) {
					i++
				}
				b.WriteByte(f[i])
			}
			i++ // the closing quote
			nodes = append(nodes, fmtNode{lit: b.String()})
		case c == '\\' && i+1 < len(f) && f[i+1] == '"':
			nodes = append(nodes, fmtNode{lit: `"`})
			i += 2
		default:
			_, sz := utf8.DecodeRuneInString(f[i:])
			nodes = append(nodes, fmtNode{lit: f[i : i+sz]})
			i += sz
		}
	}
	return nodes
}

func matchDCH(s string) *fmtKeyword {
	for i := range dchKeywords {
		if strings.HasPrefix(s, dchKeywords[i].name) {
			return &dchKeywords[i]
		}
	}
	return nil
}

// fmtTime is a broken-down timestamp or interval, PostgreSQL's pg_tm.
type fmtTime struct {
	interval bool
	tz       bool // timestamptz: TZ prints zone ("" is UTC)
	zone     string
	gmtoff   int // seconds east of UTC (timestamptz)
	// year is astronomical (0 = 1 BC) for timestamps.
	year, mon, mday  int
	hour, min, sec   int64
	fsec             int64 // microseconds
	yday, wday       int   // wday: 0 = Sunday
	isoYear, isoWeek int
	isoYday          int
	julian           int64
}

func timestampTM(micros int64, tz bool) fmtTime {
	c := breakDown(micros)
	t := fmtTime{
		tz: tz, year: c.year, mon: c.month, mday: c.day,
		hour: c.hour, min: c.min, sec: c.secMicros / microsPerSecond, fsec: c.secMicros % microsPerSecond,
		yday: c.dayOfYear, wday: c.isoDOW % 7, isoYear: c.isoYear, isoWeek: c.week,
		julian: c.days + unixJulian,
	}
	jan4 := types.DaysFromCivil(c.isoYear, 1, 4)
	week1 := jan4 - int64((((jan4+4)%7+7)%7+6)%7) // the Monday of ISO week 1
	t.isoYday = int(c.days-week1) + 1
	return t
}

func intervalTM(iv types.IntervalValue) fmtTime {
	t := fmtTime{
		interval: true, year: int(iv.Months / 12), mon: int(iv.Months % 12), mday: int(iv.Days),
		hour: iv.Micros / microsPerHour, min: iv.Micros / microsPerMinute % 60,
		sec: iv.Micros / microsPerSecond % 60, fsec: iv.Micros % microsPerSecond,
	}
	t.yday = (t.year*12+t.mon)*30 + t.mday
	// PostgreSQL computes the ISO and Julian fields of an interval as if its
	// fields were a date.
	days := types.DaysFromCivil(t.year, max(t.mon, 1), max(t.mday, 1))
	c := breakDown(days * microsPerDay)
	t.isoYear, t.isoWeek, t.wday, t.julian = c.isoYear, c.week, c.isoDOW%7, days+unixJulian
	return t
}

var (
	monthNames = []string{"January", "February", "March", "April", "May", "June", "July",
		"August", "September", "October", "November", "December"}
	dayNames   = []string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}
	romanMonth = []string{"I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII"}
)

// adjustYear is PostgreSQL's ADJUST_YEAR: BC years count up from 1.
func (t *fmtTime) adjustYear(y int) int {
	if !t.interval && y <= 0 {
		return -(y - 1)
	}
	return y
}

// padInt prints v in at least width digits (one more if negative), or
// unpadded under FM.
func padInt(buf []byte, v int64, width int, fm bool) []byte {
	if fm {
		return strconv.AppendInt(buf, v, 10)
	}
	if v < 0 {
		width++
	}
	return fmt.Appendf(buf, "%0*d", width, v)
}

func applyCase(s string, tc textCase) string {
	switch tc {
	case caseUpper:
		return strings.ToUpper(s)
	case caseLower:
		return strings.ToLower(s)
	}
	return s
}

// padName right-pads a month or day name to 9 characters unless FM or TM.
func padName(buf []byte, s string, n *fmtNode) []byte {
	buf = append(buf, s...)
	if !n.fm && !n.tm {
		for i := len(s); i < 9; i++ {
			buf = append(buf, ' ')
		}
	}
	return buf
}

// ordinalSuffix is PostgreSQL's get_th: st, nd, rd or th for the number
// that num ends with.
func ordinalSuffix(num []byte, lower bool) string {
	s := "TH"
	if n := len(num); n > 0 && !(n > 1 && num[n-2] == '1') {
		switch num[n-1] {
		case '1':
			s = "ST"
		case '2':
			s = "ND"
		case '3':
			s = "RD"
		}
	}
	if lower {
		return strings.ToLower(s)
	}
	return s
}

// dchToChar formats t with the parsed template, as PostgreSQL's
// DCH_to_char.
func dchToChar(buf []byte, nodes []fmtNode, t *fmtTime) ([]byte, *sqlerr.Error) {
	for i := range nodes {
		n := &nodes[i]
		if n.key == nil {
			buf = append(buf, n.lit...)
			continue
		}
		start := len(buf)
		var err *sqlerr.Error
		if buf, err = dchField(buf, n, t); err != nil {
			return nil, err
		}
		if n.th && n.key.digit && len(buf) > start {
			buf = append(buf, ordinalSuffix(buf[start:], n.thLower)...)
		}
	}
	return buf, nil
}

func dchField(buf []byte, n *fmtNode, t *fmtTime) ([]byte, *sqlerr.Error) {
	kw, fm := n.key, n.fm
	switch kw.id {
	case dchAM:
		pm := t.hour%24 >= 12
		s := map[bool]string{false: "AM", true: "PM"}[pm]
		if kw.dots {
			s = s[:1] + "." + s[1:] + "."
		}
		return append(buf, applyCase(s, kw.tc)...), nil
	case dchHH12:
		h := t.hour % 12
		if h == 0 {
			h = 12
		}
		return padInt(buf, h, 2, fm), nil
	case dchHH24:
		return padInt(buf, t.hour, 2, fm), nil
	case dchMI:
		return padInt(buf, t.min, 2, fm), nil
	case dchSS:
		return padInt(buf, t.sec, 2, fm), nil
	case dchFF:
		f := t.fsec
		if f < 0 {
			f = -f
		}
		for k := kw.n; k < 6; k++ {
			f /= 10
		}
		return fmt.Appendf(buf, "%0*d", kw.n, f), nil
	case dchMS:
		return fmt.Appendf(buf, "%03d", t.fsec/1000), nil
	case dchUS:
		return fmt.Appendf(buf, "%06d", t.fsec), nil
	case dchSSSS:
		return strconv.AppendInt(buf, t.hour*3600+t.min*60+t.sec, 10), nil
	case dchTZ:
		if t.interval {
			return nil, errIntervalFormat
		}
		if t.tz {
			zone := t.zone
			if zone == "" {
				zone = "UTC"
			}
			return append(buf, applyCase(zone, kw.tc)...), nil
		}
		return buf, nil
	case dchTZH:
		if t.interval {
			return nil, errIntervalFormat
		}
		return fmt.Appendf(buf, "%c%02d", offsetSign(t.gmtoff), absInt(t.gmtoff)/3600), nil
	case dchTZM:
		if t.interval {
			return nil, errIntervalFormat
		}
		return fmt.Appendf(buf, "%02d", absInt(t.gmtoff)%3600/60), nil
	case dchOF:
		if t.interval {
			return nil, errIntervalFormat
		}
		width := 2
		if fm {
			width = 0
		}
		buf = fmt.Appendf(buf, "%c%0*d", offsetSign(t.gmtoff), width, absInt(t.gmtoff)/3600)
		if r := absInt(t.gmtoff) % 3600; r != 0 {
			buf = fmt.Appendf(buf, ":%02d", r/60)
		}
		return buf, nil
	case dchAD:
		if t.interval {
			return nil, errIntervalFormat
		}
		s := "AD"
		if t.year <= 0 {
			s = "BC"
		}
		if kw.dots {
			s = s[:1] + "." + s[1:] + "."
		}
		return append(buf, applyCase(s, kw.tc)...), nil
	case dchMonth, dchMon:
		if t.interval {
			return nil, errIntervalFormat
		}
		if t.mon == 0 {
			return buf, nil
		}
		name := monthNames[t.mon-1]
		if kw.id == dchMon {
			return append(buf, applyCase(name[:3], kw.tc)...), nil
		}
		return padName(buf, applyCase(name, kw.tc), n), nil
	case dchMM:
		return padInt(buf, int64(t.mon), 2, fm), nil
	case dchDay, dchDY:
		if t.interval {
			return nil, errIntervalFormat
		}
		name := dayNames[t.wday]
		if kw.id == dchDY {
			return append(buf, applyCase(name[:3], kw.tc)...), nil
		}
		return padName(buf, applyCase(name, kw.tc), n), nil
	case dchDDD:
		return padInt(buf, int64(t.yday), 3, fm), nil
	case dchIDDD:
		return padInt(buf, int64(t.isoYday), 3, fm), nil
	case dchDD:
		return padInt(buf, int64(t.mday), 2, fm), nil
	case dchD:
		if t.interval {
			return nil, errIntervalFormat
		}
		return strconv.AppendInt(buf, int64(t.wday+1), 10), nil
	case dchIsoDow:
		if t.interval {
			return nil, errIntervalFormat
		}
		d := t.wday
		if d == 0 {
			d = 7
		}
		return strconv.AppendInt(buf, int64(d), 10), nil
	case dchWW:
		return padInt(buf, int64((t.yday-1)/7+1), 2, fm), nil
	case dchIW:
		return padInt(buf, int64(t.isoWeek), 2, fm), nil
	case dchQ:
		if t.mon == 0 {
			return buf, nil
		}
		return strconv.AppendInt(buf, int64((t.mon-1)/3+1), 10), nil
	case dchCC:
		var c int
		switch {
		case t.interval:
			c = t.year / 100
		case t.year > 0:
			c = (t.year-1)/100 + 1
		default:
			c = t.year/100 - 1
		}
		if c <= 99 && c >= -99 {
			return padInt(buf, int64(c), 2, fm), nil
		}
		return strconv.AppendInt(buf, int64(c), 10), nil
	case dchYComma:
		y := t.adjustYear(t.year)
		return fmt.Appendf(buf, "%d,%03d", y/1000, y%1000), nil
	case dchYYYY, dchYYY, dchYY, dchY, dchIYYY, dchIYY, dchIY, dchI:
		y := t.year
		if kw.id >= dchIYYY && kw.id <= dchI {
			y = t.isoYear
		}
		y = t.adjustYear(y)
		switch kw.id {
		case dchYYYY, dchIYYY:
			return padInt(buf, int64(y), 4, fm), nil
		case dchYYY, dchIYY:
			return padInt(buf, int64(y%1000), 3, fm), nil
		case dchYY, dchIY:
			return padInt(buf, int64(y%100), 2, fm), nil
		}
		return padInt(buf, int64(y%10), 1, fm), nil
	case dchRM:
		if t.mon == 0 {
			return buf, nil
		}
		s := applyCase(romanMonth[t.mon-1], kw.tc)
		buf = append(buf, s...)
		if !fm {
			for i := len(s); i < 4; i++ {
				buf = append(buf, ' ')
			}
		}
		return buf, nil
	case dchW:
		return strconv.AppendInt(buf, int64((t.mday-1)/7+1), 10), nil
	case dchJ:
		return strconv.AppendInt(buf, t.julian, 10), nil
	case dchFX:
		return buf, nil
	}
	return buf, nil
}

func init() {
	txt := types.TextT
	for _, t := range []types.T{types.TimestampT, types.TimestampTZT} {
		tz := t.Kind == types.TimestampTZ
		reg(ir.FnToChar, ts(t, txt), fixed(func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			tm := timestampTM(a[0].I, tz)
			buf, err := dchToChar(k.buf[:0], k.dchFormat(a[1].S), &tm)
			if err != nil {
				return types.Null, err
			}
			return formatResult(k, a[1].S, buf), nil
		}))
	}
	reg(ir.FnToChar, ts(types.IntervalT, txt), fixed(func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		tm := intervalTM(a[0].Ivl)
		buf, err := dchToChar(k.buf[:0], k.dchFormat(a[1].S), &tm)
		if err != nil {
			return types.Null, err
		}
		return formatResult(k, a[1].S, buf), nil
	}))
}

// formatResult is a template's output; PostgreSQL returns NULL for an empty
// template.
func formatResult(k *kctx, format string, buf []byte) types.Datum {
	if format == "" {
		return types.Null
	}
	return k.textResult(buf)
}

func offsetSign(secs int) byte {
	if secs < 0 {
		return '-'
	}
	return '+'
}

func absInt(v int) int {
	if v < 0 {
		return -v
	}
	return v
}
