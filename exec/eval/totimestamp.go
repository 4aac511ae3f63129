package eval

import (
	"strings"

	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// to_timestamp(text, text) and to_date(text, text): PostgreSQL's
// DCH_from_char for the patterns of tochar.go, outside FX mode: blanks
// around values are skipped, a separator in the template skips one
// separator of the input, and the input may end early (the missing fields
// keep their defaults: year 1 BC, January 1st, midnight, as in PostgreSQL).

const codeDatetimeFieldOverflow = "22008"

// parsedTime collects the fields read from the input.
type parsedTime struct {
	year, mon, mday  int
	yearSet, bc      bool
	hour, min, sec   int64
	fsec             int64
	pm, ampmSet, h12 bool
	yday             int
	julian           int64
	julianSet        bool
	tzSign           int64
	tzh, tzm         int64
}

func isSeparator(c byte) bool {
	return !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z')
}

func skipBlanks(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n') {
		i++
	}
	return i
}

// fromChar parses s with the template's nodes.
func fromChar(s string, nodes []fmtNode) (parsedTime, *sqlerr.Error) {
	p := parsedTime{mon: 1, mday: 1}
	i := 0
	for ni := 0; ni < len(nodes) && i < len(s); ni++ {
		n := &nodes[ni]
		if n.key == nil {
			if strings.TrimSpace(n.lit) == "" {
				i = skipBlanks(s, i)
			} else if isSeparator(s[i]) {
				i++
			} else if !isSeparator(n.lit[0]) {
				i += len(n.lit)
			}
			continue
		}
		i = skipBlanks(s, i)
		if i >= len(s) {
			break
		}
		// A digit field followed directly by another digit field reads at
		// most its width; otherwise it reads every digit.
		nextDigit := ni+1 < len(nodes) && nodes[ni+1].key != nil && nodes[ni+1].key.digit
		var err *sqlerr.Error
		if i, err = p.field(s, i, n, nextDigit); err != nil {
			return p, err
		}
		if n.th && i+2 <= len(s) {
			i += 2
		}
	}
	return p, nil
}

// readInt reads an optionally signed integer of at most width digits (all
// of them when width is 0).
func readInt(s string, i, width int, signed bool, name string) (int64, int, *sqlerr.Error) {
	start := i
	neg := false
	if signed && i < len(s) && (s[i] == '-' || s[i] == '+') {
		neg = s[i] == '-'
		i++
	}
	var v int64
	digits := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' && (width == 0 || digits < width) {
		v = v*10 + int64(s[i]-'0')
		if v > 1<<40 {
			return 0, i, sqlerr.New(codeDatetimeFieldOverflow, "value for \"%s\" in source string is out of range", name)
		}
		i++
		digits++
	}
	if digits == 0 {
		end := i
		for end < len(s) && !isSeparator(s[end]) {
			end++
		}
		e := sqlerr.New(codeInvalidDatetimeFormat, "invalid value \"%s\" for \"%s\"", s[start:end], name)
		e.Detail = "Value must be an integer."
		return 0, i, e
	}
	if neg {
		v = -v
	}
	return v, i, nil
}

// matchWord reads one of words (case-insensitively), returning its index.
func matchWord(s string, i int, words []string, n int, name string) (int, int, *sqlerr.Error) {
	for k, w := range words {
		if n > 0 {
			w = w[:n]
		}
		if len(s)-i >= len(w) && strings.EqualFold(s[i:i+len(w)], w) {
			return k, i + len(w), nil
		}
	}
	end := min(len(s), i+max(n, 3))
	e := sqlerr.New(codeInvalidDatetimeFormat, "invalid value \"%s\" for \"%s\"", s[i:end], name)
	e.Detail = "The given value did not match any of the allowed values for this field."
	return 0, i, e
}

func (p *parsedTime) field(s string, i int, n *fmtNode, nextDigit bool) (int, *sqlerr.Error) {
	kw := n.key
	width := func(w int) int {
		if nextDigit {
			return w
		}
		return 0
	}
	var v int64
	var err *sqlerr.Error
	readN := func(w int, signed bool) {
		v, i, err = readInt(s, i, w, signed, kw.name)
	}
	switch kw.id {
	case dchAM:
		words := []string{"AM", "PM"}
		if kw.dots {
			words = []string{"A.M.", "P.M."}
		}
		var k int
		if k, i, err = matchWord(s, i, words, 0, kw.name); err == nil {
			p.pm, p.ampmSet = k == 1, true
		}
		return i, err
	case dchAD:
		words := []string{"AD", "BC"}
		if kw.dots {
			words = []string{"A.D.", "B.C."}
		}
		var k int
		if k, i, err = matchWord(s, i, words, 0, kw.name); err == nil {
			p.bc = k == 1
		}
		return i, err
	case dchMonth, dchMon:
		nlen := 0
		if kw.id == dchMon {
			nlen = 3
		}
		var k int
		if k, i, err = matchWord(s, i, monthNames, nlen, kw.name); err == nil {
			p.mon = k + 1
		}
		return i, err
	case dchDay, dchDY:
		nlen := 0
		if kw.id == dchDY {
			nlen = 3
		}
		_, i, err = matchWord(s, i, dayNames, nlen, kw.name)
		return i, err
	case dchHH12, dchHH24:
		readN(2, false)
		if err == nil && kw.id == dchHH12 {
			if v < 1 || v > 12 {
				return i, sqlerr.New(codeInvalidDatetimeFormat, "hour \"%d\" is invalid for the 12-hour clock", v).
					WithHint("Use the 24-hour clock, or give an hour between 1 and 12.")
			}
			p.h12 = true
		}
		p.hour = v
	case dchMI:
		readN(2, false)
		p.min = v
	case dchSS:
		readN(2, false)
		p.sec = v
	case dchSSSS:
		readN(0, false)
		p.hour, p.min, p.sec = v/3600, v/60%60, v%60
	case dchMS, dchUS, dchFF:
		w := map[dchID]int{dchMS: 3, dchUS: 6, dchFF: kw.n}[kw.id]
		start := i
		readN(w, false)
		for d := i - start; d < 6; d++ {
			v *= 10
		}
		p.fsec = v
	case dchYComma:
		var hi int64
		if hi, i, err = readInt(s, i, 0, false, kw.name); err == nil && i < len(s) && s[i] == ',' {
			var lo int64
			lo, i, err = readInt(s, i+1, 3, false, kw.name)
			hi = hi*1000 + lo
		}
		p.year, p.yearSet = int(hi), true
	case dchYYYY, dchIYYY:
		readN(width(4), true)
		p.year, p.yearSet = int(v), true
	case dchYYY, dchIYY:
		readN(3, false)
		// PostgreSQL's adjust_partial_year_to_2020.
		if v < 70 {
			v += 2000
		} else if v < 100 {
			v += 1900
		} else if v < 520 {
			v += 2000
		} else {
			v += 1000
		}
		p.year, p.yearSet = int(v), true
	case dchYY, dchIY:
		readN(2, false)
		if v < 70 {
			v += 2000
		} else if v < 100 {
			v += 1900
		}
		p.year, p.yearSet = int(v), true
	case dchY, dchI:
		readN(1, false)
		p.year, p.yearSet = int(v)+2000, true
	case dchCC:
		readN(width(2), false)
		if !p.yearSet {
			p.year = int(v-1)*100 + 1
		}
	case dchMM:
		readN(2, false)
		p.mon = int(v)
	case dchDD:
		readN(2, false)
		p.mday = int(v)
	case dchDDD, dchIDDD:
		readN(3, false)
		p.yday = int(v)
	case dchD, dchIsoDow, dchW, dchWW, dchIW, dchQ:
		readN(width(2), false) // read and, as PostgreSQL, not used for the date
	case dchJ:
		readN(0, false)
		p.julian, p.julianSet = v, true
	case dchRM:
		var k int
		romans := []string{"XII", "XI", "X", "IX", "VIII", "VII", "VI", "V", "IV", "III", "II", "I"}
		if k, i, err = matchWord(s, i, romans, 0, kw.name); err == nil {
			p.mon = 12 - k
		}
		return i, err
	case dchTZH, dchOF:
		if i < len(s) && (s[i] == '-' || s[i] == '+') {
			p.tzSign = map[bool]int64{true: -1, false: 1}[s[i] == '-']
			i++
		} else {
			p.tzSign = 1
		}
		readN(2, false)
		p.tzh = v
		if kw.id == dchOF && err == nil && i+1 < len(s) && s[i] == ':' {
			v, i, err = readInt(s, i+1, 2, false, kw.name)
			p.tzm = v
		}
	case dchTZM:
		readN(2, false)
		p.tzm = v
		if p.tzSign == 0 {
			p.tzSign = 1
		}
	case dchTZ:
		if strings.HasPrefix(strings.ToUpper(s[i:]), "UTC") || strings.HasPrefix(strings.ToUpper(s[i:]), "GMT") {
			p.tzSign = 1 // an explicit zone: not the session's
			return i + 3, nil
		}
		return i, sqlerr.Unsupported("time zone names other than UTC in to_timestamp")
	case dchFX:
	}
	return i, err
}

// days returns the date read, checking the fields.
func (p *parsedTime) days(input string) (int64, *sqlerr.Error) {
	if p.julianSet {
		return p.julian - unixJulian, nil
	}
	year := p.year
	if p.bc && year > 0 {
		year = -(year - 1)
	}
	outOfRange := sqlerr.New(codeDatetimeFieldOverflow, "date/time field value out of range: \"%s\"", input)
	if p.yday > 0 {
		if p.yday > 365+boolInt(types.DaysInMonth(year, 2) == 29) {
			return 0, outOfRange
		}
		return types.DaysFromCivil(year, 1, 1) + int64(p.yday-1), nil
	}
	if p.mon < 1 || p.mon > 12 || p.mday < 1 || p.mday > types.DaysInMonth(year, p.mon) {
		return 0, outOfRange
	}
	return types.DaysFromCivil(year, p.mon, p.mday), nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// micros returns the timestamp read (UTC).
func (p *parsedTime) micros(input string) (int64, *sqlerr.Error) {
	d, err := p.days(input)
	if err != nil {
		return 0, err
	}
	h := p.hour
	if p.ampmSet || p.h12 {
		if p.pm && h < 12 {
			h += 12
		} else if !p.pm && h == 12 {
			h = 0
		}
	}
	if h > 24 || p.min > 59 || p.sec > 60 {
		return 0, sqlerr.New(codeDatetimeFieldOverflow, "date/time field value out of range: \"%s\"", input)
	}
	us := d*microsPerDay + h*microsPerHour + p.min*microsPerMinute + p.sec*microsPerSecond + p.fsec
	us -= p.tzSign * (p.tzh*microsPerHour + p.tzm*microsPerMinute)
	if !validTS(us) {
		return 0, errTimestampRange
	}
	return us, nil
}

func init() {
	txt := types.TextT
	reg(ir.FnToTimestamp, ts(txt, txt), fixed(func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		p, err := fromChar(a[0].S, k.dchFormat(a[1].S))
		if err != nil {
			return types.Null, err
		}
		us, err := p.micros(a[0].S)
		return types.DInt(us), err
	}))
	reg(ir.FnToDate, ts(txt, txt), fixed(func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		p, err := fromChar(a[0].S, k.dchFormat(a[1].S))
		if err != nil {
			return types.Null, err
		}
		d, err := p.days(a[0].S)
		if err == nil && !validDate(d) {
			err = errDateRange
		}
		return types.DInt(d), err
	}))
}
