package eval

import (
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// randMantissa returns a random numeric mantissa with up to 38 digits,
// biased towards edge sizes.
func randMantissa(rng *rand.Rand) decimal128.Num {
	digits := rng.IntN(39)
	if rng.IntN(4) == 0 {
		digits = []int{0, 1, 12, 13, 19, 20, 26, 37, 38}[rng.IntN(9)]
	}
	b := make([]byte, 0, 40)
	if rng.IntN(2) == 0 {
		b = append(b, '-')
	}
	b = append(b, '0')
	for i := 0; i < digits; i++ {
		b = append(b, byte('0'+rng.IntN(10)))
	}
	var m big.Int
	m.SetString(string(b), 10)
	return decimal128.FromBigInt(&m)
}

var (
	bigMax  = new(big.Int).Exp(big.NewInt(10), big.NewInt(38), nil)
	bigTen  = big.NewInt(10)
	bigZero = new(big.Int)
)

func bigPow10(k int32) *big.Int { return new(big.Int).Exp(bigTen, big.NewInt(int64(k)), nil) }

// bigRoundDiv divides rounding half away from zero.
func bigRoundDiv(a, b *big.Int) *big.Int {
	q, r := new(big.Int).QuoRem(a, b, new(big.Int))
	r2 := new(big.Int).Mul(new(big.Int).Abs(r), big.NewInt(2))
	if r2.Cmp(new(big.Int).Abs(b)) >= 0 {
		if (a.Sign() < 0) != (b.Sign() < 0) {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return q
}

func fitsBig(v *big.Int) bool { return new(big.Int).Abs(v).Cmp(bigMax) < 0 }

func checkDec(t *testing.T, what string, a, b decimal128.Num, got decimal128.Num, ok bool, want *big.Int) {
	t.Helper()
	wantOK := fitsBig(want)
	if ok != wantOK || (ok && got.BigInt().Cmp(want) != 0) {
		t.Fatalf("%s(%s, %s) = %s %v, want %s %v", what, a.BigInt(), b.BigInt(), got.BigInt(), ok, want, wantOK)
	}
}

func TestDecimalArithmeticAgainstBig(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const s = 12
	for i := 0; i < 20000; i++ {
		a, b := randMantissa(rng), randMantissa(rng)
		ba, bb := a.BigInt(), b.BigInt()
		r, ok := numAdd(a, b)
		checkDec(t, "add", a, b, r, ok, new(big.Int).Add(ba, bb))
		r, ok = numSub(a, b)
		checkDec(t, "sub", a, b, r, ok, new(big.Int).Sub(ba, bb))
		r, ok = numMul(a, b, s)
		checkDec(t, "mul", a, b, r, ok, bigRoundDiv(new(big.Int).Mul(ba, bb), bigPow10(s)))
		if bb.Sign() != 0 {
			r, ok = numDiv(a, b, s)
			checkDec(t, "div", a, b, r, ok, bigRoundDiv(new(big.Int).Mul(ba, bigPow10(s)), bb))
			r, ok = numMod(a, b)
			checkDec(t, "mod", a, b, r, ok, new(big.Int).Rem(ba, bb))
		} else if _, ok := numDiv(a, b, s); ok {
			t.Fatal("division by zero succeeded")
		}
		from, to := int32(rng.IntN(39)), int32(rng.IntN(39))
		r, ok = rescale(a, from, to)
		var want *big.Int
		if to >= from {
			want = new(big.Int).Mul(ba, bigPow10(to-from))
		} else {
			want = bigRoundDiv(ba, bigPow10(from-to))
		}
		checkDec(t, "rescale", a, decimal128.FromI64(int64(from*100+to)), r, ok, want)
		digits := int64(rng.IntN(60) - 30)
		r, ok = numRoundTo(a, s, digits, roundHalfAway)
		if digits >= s {
			want = ba
		} else {
			p := bigPow10(int32(s - digits))
			want = new(big.Int).Mul(bigRoundDiv(ba, p), p)
		}
		checkDec(t, "round", a, decimal128.FromI64(digits), r, ok, want)
		r, ok = numRoundTo(a, s, digits, roundTrunc)
		if digits < s {
			p := bigPow10(int32(s - digits))
			want = new(big.Int).Mul(new(big.Int).Quo(ba, p), p)
		}
		checkDec(t, "trunc", a, decimal128.FromI64(digits), r, ok, want)
		if c := numCompare(a, from, b, to); c != new(big.Int).Mul(ba, bigPow10(38-from)).Cmp(new(big.Int).Mul(bb, bigPow10(38-to))) {
			t.Fatalf("compare(%s@%d, %s@%d) = %d", ba, from, bb, to, c)
		}
	}
}

func TestDivmod256(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 20000; i++ {
		var u [4]uint64
		for j := range u {
			if rng.IntN(3) > 0 {
				u[j] = rng.Uint64()
			}
		}
		v := u128{hi: rng.Uint64() >> rng.IntN(64), lo: rng.Uint64()}
		if rng.IntN(3) == 0 {
			v.hi = 0
		}
		if v.isZero() {
			continue
		}
		q, r := divmod256(u, v)
		bu := new(big.Int)
		for j := 3; j >= 0; j-- {
			bu.Lsh(bu, 64).Or(bu, new(big.Int).SetUint64(u[j]))
		}
		bv := new(big.Int).Lsh(new(big.Int).SetUint64(v.hi), 64)
		bv.Or(bv, new(big.Int).SetUint64(v.lo))
		wq, wr := new(big.Int).QuoRem(bu, bv, new(big.Int))
		gq := new(big.Int)
		for j := 3; j >= 0; j-- {
			gq.Lsh(gq, 64).Or(gq, new(big.Int).SetUint64(q[j]))
		}
		gr := new(big.Int).Lsh(new(big.Int).SetUint64(r.hi), 64)
		gr.Or(gr, new(big.Int).SetUint64(r.lo))
		if gq.Cmp(wq) != 0 || gr.Cmp(wr) != 0 {
			t.Fatalf("%s / %s = %s rem %s, want %s rem %s", bu, bv, gq, gr, wq, wr)
		}
	}
	_ = bigZero
}

func TestFloatNumericConversions(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 5000; i++ {
		m := randMantissa(rng)
		f := numToFloat(m, 12)
		// numToFloat must be the correctly rounded value.
		want, _ := new(big.Float).SetPrec(200).Quo(new(big.Float).SetInt(m.BigInt()), new(big.Float).SetInt(bigPow10(12))).Float64()
		if f != want {
			t.Fatalf("numToFloat(%s) = %v, want %v", m.BigInt(), f, want)
		}
		exact := new(big.Float).SetPrec(200).Quo(new(big.Float).SetInt(m.BigInt()), new(big.Float).SetInt(bigPow10(12)))
		want32, _ := exact.Float32()
		if got := numToFloat32(m, 12); got != float64(want32) {
			t.Fatalf("numToFloat32(%s) = %v, want %v", m.BigInt(), got, want32)
		}
	}
}
