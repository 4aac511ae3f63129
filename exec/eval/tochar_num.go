package eval

import (
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// This file is PostgreSQL's formatting.c for numbers: to_char(number, text)
// with the patterns 9 0 . , D G S PR MI PL SG L FM TH, in the C locale
// (decimal point '.', group separator ',', currency symbol ' '). RN, V, EEEE
// and B are not supported (0A000).

type numID uint8

const (
	num9 numID = iota + 1
	num0
	numDec // '.'
	numD
	numComma
	numG
	numL
	numS
	numMI
	numPL
	numSG
	numPR
	numFM
	numTH
	numth
	numUnsupported
)

type numKeyword struct {
	name string
	id   numID
}

var numKeywords = []numKeyword{
	{",", numComma}, {".", numDec}, {"0", num0}, {"9", num9},
	{"B", numUnsupported}, {"C", numUnsupported}, {"D", numD}, {"EEEE", numUnsupported},
	{"FM", numFM}, {"G", numG}, {"L", numL}, {"MI", numMI}, {"PL", numPL}, {"PR", numPR},
	{"RN", numUnsupported}, {"SG", numSG}, {"SP", numUnsupported}, {"S", numS}, {"TH", numTH},
	{"V", numUnsupported},
	{"b", numUnsupported}, {"c", numUnsupported}, {"d", numD}, {"eeee", numUnsupported},
	{"fm", numFM}, {"g", numG}, {"l", numL}, {"mi", numMI}, {"pl", numPL}, {"pr", numPR},
	{"rn", numUnsupported}, {"sg", numSG}, {"sp", numUnsupported}, {"s", numS}, {"th", numth},
	{"v", numUnsupported},
}

// numItem is one parsed element of a number template.
type numItem struct {
	id  numID // 0: literal
	lit string
}

// numDesc is PostgreSQL's NUMDesc: what the template asks for.
type numDesc struct {
	items          []numItem
	pre, post      int // digits before and after the decimal point
	zeroStart      int // 1-based position of the first 0 before the point
	zeroEnd        int
	preLsignNum    int
	lsign          int // 0 none, 1 before the number, 2 after
	decimal, zero  bool
	fill, bracket  bool
	minus, plus    bool
	minusPost      bool
	plusPost       bool
	lsignSet       bool
	localeDecimal  bool
	unsupportedPat string
}

const (
	lsignNone = iota
	lsignPre
	lsignPost
)

func numSyntaxErr(msg string) *sqlerr.Error { return sqlerr.New(sqlerr.SyntaxError, "%s", msg) }

// parseNum parses a number template as NUMDesc_prepare does.
func parseNum(f string) (numDesc, *sqlerr.Error) {
	var d numDesc
	for i := 0; i < len(f); {
		var kw *numKeyword
		for j := range numKeywords {
			if strings.HasPrefix(f[i:], numKeywords[j].name) {
				kw = &numKeywords[j]
				break
			}
		}
		if kw == nil {
			_, sz := utf8.DecodeRuneInString(f[i:])
			if f[i] == '"' {
				// Quoted text is copied as is.
				end := strings.IndexByte(f[i+1:], '"')
				if end < 0 {
					end = len(f) - i - 1
				}
				d.items = append(d.items, numItem{lit: f[i+1 : i+1+end]})
				i += end + 2
				continue
			}
			d.items = append(d.items, numItem{lit: f[i : i+sz]})
			i += sz
			continue
		}
		i += len(kw.name)
		if err := d.prepare(kw); err != nil {
			return d, err
		}
		d.items = append(d.items, numItem{id: kw.id})
	}
	if d.zeroStart > 0 {
		d.zeroStart--
	}
	return d, nil
}

func (d *numDesc) prepare(kw *numKeyword) *sqlerr.Error {
	switch kw.id {
	case num9:
		if d.bracket {
			return numSyntaxErr(`"9" must be ahead of "PR"`)
		}
		if d.decimal {
			d.post++
		} else {
			d.pre++
		}
	case num0:
		if d.bracket {
			return numSyntaxErr(`"0" must be ahead of "PR"`)
		}
		if !d.zero && !d.decimal {
			d.zero = true
			d.zeroStart = d.pre + 1
		}
		if d.decimal {
			d.post++
		} else {
			d.pre++
		}
		d.zeroEnd = d.pre + d.post
	case numD, numDec:
		if d.decimal {
			return numSyntaxErr("multiple decimal points")
		}
		d.decimal = true
		d.localeDecimal = kw.id == numD
	case numFM:
		d.fill = true
	case numS:
		if d.lsignSet {
			return numSyntaxErr(`cannot use "S" twice`)
		}
		if d.plus || d.minus || d.bracket {
			return numSyntaxErr(`cannot use "S" and "PL"/"MI"/"SG"/"PR" together`)
		}
		if !d.decimal {
			d.lsign, d.preLsignNum = lsignPre, d.pre
		} else {
			d.lsign = lsignPost
		}
		d.lsignSet = true
	case numMI:
		if d.lsignSet {
			return numSyntaxErr(`cannot use "S" and "MI" together`)
		}
		d.minus = true
		d.minusPost = d.decimal
	case numPL:
		if d.lsignSet {
			return numSyntaxErr(`cannot use "S" and "PL" together`)
		}
		d.plus = true
		d.plusPost = d.decimal
	case numSG:
		if d.lsignSet {
			return numSyntaxErr(`cannot use "S" and "SG" together`)
		}
		d.minus, d.plus = true, true
	case numPR:
		if d.lsignSet || d.plus || d.minus {
			return numSyntaxErr(`cannot use "PR" and "S"/"PL"/"MI"/"SG" together`)
		}
		d.bracket = true
	case numUnsupported:
		return sqlerr.Unsupported("the number format pattern %q", kw.name)
	}
	return nil
}

func (k *kctx) numFormat(f string) (*numDesc, *sqlerr.Error) {
	c := &k.format
	if c.nodes != nil && c.num && c.src == f {
		return &c.desc, nil
	}
	d, err := parseNum(f)
	if err != nil {
		return nil, err
	}
	c.src, c.num, c.nodes, c.desc = f, true, []fmtNode{}, d
	return &c.desc, nil
}

// numToChar formats a number given as its sign and its digits (with a
// point before post digits when post > 0), as NUM_processor does.
func numToChar(buf []byte, d *numDesc, neg bool, digits string) []byte {
	num := *d // the processor adjusts flags per value
	sign := byte('+')
	if neg {
		sign = '-'
	}
	// Pad or overflow the integer part.
	preLen := len(digits)
	if p := strings.IndexByte(digits, '.'); p >= 0 {
		preLen = p
	}
	outPreSpaces := 0
	if preLen < num.pre {
		outPreSpaces = num.pre - preLen
	} else if preLen > num.pre {
		b := []byte(strings.Repeat("#", num.pre+num.post+1))
		b[num.pre] = '.'
		digits = string(b)
	}
	p := numProc{d: &num, sign: sign, number: digits, outPreSpaces: outPreSpaces, lastRelevant: -1}
	if num.plus || num.minus {
		p.signWrote = !(num.plus && !num.minus)
	} else {
		if sign != '-' && num.fill {
			num.bracket = false
		}
		p.signWrote = sign == '+' && num.fill && num.lsign == lsignNone
		if num.lsign == lsignPre && num.pre == num.preLsignNum {
			num.lsign = lsignPost
		}
	}
	p.numCount = num.post + num.pre - 1
	if num.fill && num.decimal {
		p.lastRelevant = lastRelevantDecimal(digits)
		if p.lastRelevant >= 0 && num.zeroEnd > outPreSpaces {
			lastZero := min(len(digits)-1, num.zeroEnd-outPreSpaces)
			if p.lastRelevant < lastZero {
				p.lastRelevant = lastZero
			}
		}
	}
	if !p.signWrote && outPreSpaces == 0 {
		p.numCount++
	}
	p.out = buf
	for _, it := range num.items {
		switch it.id {
		case 0:
			p.out = append(p.out, it.lit...)
		case num9, num0, numDec, numD:
			p.numPart(it.id)
		case numComma, numG:
			switch {
			case p.numIn:
				p.out = append(p.out, ',')
			case !num.fill:
				p.out = append(p.out, ' ')
			}
		case numL:
			p.out = append(p.out, ' ')
		case numTH, numth:
			if digits[0] == '#' || sign == '-' || num.decimal {
				continue
			}
			p.out = append(p.out, ordinalSuffix([]byte(digits), it.id == numth)...)
		case numMI:
			switch {
			case sign == '-':
				p.out = append(p.out, '-')
			case !num.fill:
				p.out = append(p.out, ' ')
			}
		case numPL:
			switch {
			case sign == '+':
				p.out = append(p.out, '+')
			case !num.fill:
				p.out = append(p.out, ' ')
			}
		case numSG:
			p.out = append(p.out, sign)
		}
	}
	return p.out
}

// lastRelevantDecimal is get_last_relevant_decnum: the position of the last
// nonzero digit after the point, or of the point itself.
func lastRelevantDecimal(s string) int {
	p := strings.IndexByte(s, '.')
	if p < 0 {
		return -1
	}
	last := p
	for i := p + 1; i < len(s); i++ {
		if s[i] != '0' {
			last = i
		}
	}
	return last
}

// numProc is NUM_processor's state while writing one number.
type numProc struct {
	d            *numDesc
	sign         byte
	number       string
	pos          int // next digit of number
	lastRelevant int
	outPreSpaces int
	numCount     int
	numCurr      int
	numIn        bool
	signWrote    bool
	out          []byte
}

// predecSpace is IS_PREDEC_SPACE: a lone 0 before the point prints as a
// space ("9.9" formats 0.1 as " .1").
func (p *numProc) predecSpace() bool {
	return !p.d.zero && p.pos == 0 && len(p.number) > 0 && p.number[0] == '0' && p.d.post != 0
}

func (p *numProc) writeSign(post bool) {
	if p.sign == '-' {
		p.out = append(p.out, '-')
	} else {
		p.out = append(p.out, '+')
	}
	_ = post
}

func (p *numProc) cur() byte {
	if p.pos < len(p.number) {
		return p.number[p.pos]
	}
	return 0
}

// numPart is NUM_numpart_to_char.
func (p *numProc) numPart(id numID) {
	d := p.d
	p.numIn = false
	lastIsPoint := p.lastRelevant >= 0 && p.lastRelevant < len(p.number) && p.number[p.lastRelevant] == '.'
	if !p.signWrote &&
		(p.numCurr >= p.outPreSpaces || (d.zero && d.zeroStart == p.numCurr)) &&
		(!p.predecSpace() || lastIsPoint) {
		switch {
		case d.lsign != lsignNone:
			if d.lsign == lsignPre {
				p.writeSign(false)
				p.signWrote = true
			}
		case d.bracket:
			if p.sign == '+' {
				p.out = append(p.out, ' ')
			} else {
				p.out = append(p.out, '<')
			}
			p.signWrote = true
		case p.sign == '+':
			if !d.fill {
				p.out = append(p.out, ' ')
			}
			p.signWrote = true
		case p.sign == '-':
			p.out = append(p.out, '-')
			p.signWrote = true
		}
	}
	switch {
	case p.numCurr < p.outPreSpaces && (d.zeroStart > p.numCurr || !d.zero):
		if !d.fill {
			p.out = append(p.out, ' ')
		}
	case d.zero && p.numCurr < p.outPreSpaces && d.zeroStart <= p.numCurr:
		p.out = append(p.out, '0')
		p.numIn = true
	default:
		if p.cur() == '.' {
			if !lastIsPoint || d.fill {
				p.out = append(p.out, '.')
			}
		} else {
			switch {
			case p.lastRelevant >= 0 && p.pos > p.lastRelevant && id != num0:
			case p.predecSpace():
				if !d.fill {
					p.out = append(p.out, ' ')
				} else if lastIsPoint {
					p.out = append(p.out, '0')
				}
			default:
				if c := p.cur(); c != 0 {
					p.out = append(p.out, c)
				}
				p.numIn = true
			}
		}
		if p.pos < len(p.number) {
			p.pos++
		}
	}
	end := p.numCount
	if p.outPreSpaces > 0 {
		end++
	}
	if d.decimal {
		end++
	}
	if p.lastRelevant >= 0 && p.lastRelevant == p.pos {
		end = p.numCurr
	}
	if p.numCurr+1 == end {
		switch {
		case p.signWrote && d.bracket:
			if p.sign == '+' {
				p.out = append(p.out, ' ')
			} else {
				p.out = append(p.out, '>')
			}
		case d.lsign == lsignPost:
			p.writeSign(true)
		}
	}
	p.numCurr++
}

// decimalDigits returns |mantissa| at scale as digits with post fractional
// digits (rounded half away from zero, or padded with zeros).
func decimalDigits(m *big.Int, scale int32, post int) string {
	v := new(big.Int).Abs(m)
	if shift := int(scale) - post; shift > 0 {
		den := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(shift)), nil)
		q, r := new(big.Int).QuoRem(v, den, new(big.Int))
		if r.Lsh(r, 1).Cmp(den) >= 0 {
			q.Add(q, big.NewInt(1))
		}
		v = q
	} else if shift < 0 {
		v.Mul(v, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-shift)), nil))
	}
	s := v.String()
	if post == 0 {
		return s
	}
	for len(s) <= post {
		s = "0" + s
	}
	return s[:len(s)-post] + "." + s[len(s)-post:]
}

func init() {
	txt := types.TextT
	numKernel := func(digits func(a types.Datum, post int) (bool, string)) kernelMaker {
		return fixed(func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			d, err := k.numFormat(a[1].S)
			if err != nil {
				return types.Null, err
			}
			neg, s := digits(a[0], d.post)
			return formatResult(k, a[1].S, numToChar(k.buf[:0], d, neg, s)), nil
		})
	}
	intDigits := func(a types.Datum, post int) (bool, string) {
		v := a.I
		s := strconv.FormatUint(uint64(v), 10)
		if v < 0 {
			s = strconv.FormatUint(uint64(-v), 10)
		}
		if post > 0 {
			s += "." + strings.Repeat("0", post)
		}
		return v < 0, s
	}
	reg(ir.FnToChar, ts(types.Int32T, txt), numKernel(intDigits))
	reg(ir.FnToChar, ts(types.Int64T, txt), numKernel(intDigits))
	reg(ir.FnToChar, ts(types.NumericT, txt), func(args []types.T, _ types.T) scalarFn {
		t := args[0]
		return numKernel(func(a types.Datum, post int) (bool, string) {
			n, scale := types.NumericParts(t, a.Dec)
			m := n.BigInt()
			s := decimalDigits(m, scale, post)
			neg := m.Sign() < 0 && strings.Trim(s, "0.") != ""
			return neg, s
		})(args, types.TextT)
	})
	floatDigits := func(maxDigits int) func(a types.Datum, post int) (bool, string) {
		return func(a types.Datum, post int) (bool, string) {
			v := a.F
			pre := len(strconv.FormatFloat(math.Abs(v), 'f', 0, 64))
			if pre >= maxDigits {
				post = 0
			} else if pre+post > maxDigits {
				post = maxDigits - pre
			}
			s := strconv.FormatFloat(v, 'f', post, 64)
			neg := strings.HasPrefix(s, "-")
			return neg, strings.TrimPrefix(s, "-")
		}
	}
	reg(ir.FnToChar, ts(types.Float32T, txt), numKernel(floatDigits(6)))
	reg(ir.FnToChar, ts(types.Float64T, txt), numKernel(floatDigits(15)))
}
