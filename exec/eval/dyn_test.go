package eval

import (
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/streamsql/streamsql/types"
)

// randDyn returns a random unconstrained numeric: up to 36 digits (often
// few, often with trailing zeros) at any scale.
func randDyn(r *rand.Rand) decimal128.Num {
	nd := 1 + r.IntN(types.DynDigits)
	if r.IntN(2) == 0 {
		nd = 1 + r.IntN(6)
	}
	m := new(big.Int)
	for range nd {
		m.Mul(m, big.NewInt(10)).Add(m, big.NewInt(int64(r.IntN(10))))
	}
	if r.IntN(2) == 0 {
		m.Neg(m)
	}
	return types.PackNumeric(decimal128.FromBigInt(m), int32(r.IntN(types.DynMaxScale+1)))
}

func dynRat(p decimal128.Num) *big.Rat {
	m, s := types.UnpackNumeric(p)
	return new(big.Rat).SetFrac(m.BigInt(), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(s)), nil))
}

// refFit is the reference for the display scale rules: x rounded half away
// from zero at scale s, fraction digits dropped while it has more than 36
// digits, then padded with zeros towards s while it has fewer. ok is false
// if the integer part alone has more than 36 digits.
func refFit(x *big.Rat, s int32) (decimal128.Num, bool) {
	s = min(s, types.DynMaxScale)
	at := func(k int32) *big.Int {
		v := new(big.Rat).Mul(x, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(k)), nil)))
		q, rem := new(big.Int).QuoRem(v.Num(), v.Denom(), new(big.Int))
		if rem.Sign() != 0 && new(big.Int).Mul(new(big.Int).Abs(rem), big.NewInt(2)).Cmp(v.Denom()) >= 0 {
			q.Add(q, big.NewInt(int64(v.Sign())))
		}
		return q
	}
	digits := func(v *big.Int) int32 {
		if v.Sign() == 0 {
			return 0
		}
		return int32(len(new(big.Int).Abs(v).String()))
	}
	k := s
	q := at(k)
	for digits(q) > types.DynDigits {
		if k == 0 {
			return decimal128.Num{}, false
		}
		k--
		q = at(k)
	}
	for k < s && digits(q) < types.DynDigits {
		q.Mul(q, big.NewInt(10))
		k++
	}
	return types.PackNumeric(decimal128.FromBigInt(q), k), true
}

// refDivScale is select_div_scale computed from the decimal text.
func refDivScale(a, b decimal128.Num) int32 {
	wf := func(p decimal128.Num) (int32, int32) {
		m, s := types.UnpackNumeric(p)
		ds := new(big.Int).Abs(m.BigInt()).String()
		if ds == "0" {
			return 0, 0
		}
		e := int32(len(ds)) - 1 - s
		w := e >> 2
		lead := int(e - 4*w + 1)
		for len(ds) < lead {
			ds += "0"
		}
		f, _ := new(big.Int).SetString(ds[:lead], 10)
		return w, int32(f.Int64())
	}
	w1, f1 := wf(a)
	w2, f2 := wf(b)
	q := w1 - w2
	if f1 <= f2 {
		q--
	}
	_, sa := types.UnpackNumeric(a)
	_, sb := types.UnpackNumeric(b)
	return max(16-4*q, sa, sb, 0)
}

// TestDynArithmetic checks + - * / on random unconstrained numerics against
// exact rational arithmetic with PostgreSQL's display scales.
func TestDynArithmetic(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		a, b := randDyn(r), randDyn(r)
		_, sa := types.UnpackNumeric(a)
		_, sb := types.UnpackNumeric(b)
		check := func(op string, got decimal128.Num, ok bool, exact *big.Rat, scale int32) {
			t.Helper()
			want, wantOK := refFit(exact, scale)
			if ok != wantOK || ok && got != want {
				t.Fatalf("%s %s %s = %s (ok %v), want %s (ok %v)", types.DNumeric(a).Text(types.NumericT), op,
					types.DNumeric(b).Text(types.NumericT), types.DNumeric(got).Text(types.NumericT), ok,
					types.DNumeric(want).Text(types.NumericT), wantOK)
			}
		}
		x, y := dynRat(a), dynRat(b)
		got, ok := dynAdd(a, b)
		check("+", got, ok, new(big.Rat).Add(x, y), max(sa, sb))
		got, ok = dynSub(a, b)
		check("-", got, ok, new(big.Rat).Sub(x, y), max(sa, sb))
		got, ok = dynMul(a, b)
		check("*", got, ok, new(big.Rat).Mul(x, y), sa+sb)
		if y.Sign() != 0 {
			got, ok = dynDiv(a, b)
			check("/", got, ok, new(big.Rat).Quo(x, y), refDivScale(a, b))
		}
		if y.Sign() != 0 {
			// a % b = a - b·trunc(a/b), with the sign of a.
			q := new(big.Int).Quo(new(big.Rat).Quo(x, y).Num(), new(big.Rat).Quo(x, y).Denom())
			rem := new(big.Rat).Sub(x, new(big.Rat).Mul(y, new(big.Rat).SetInt(q)))
			got, ok = dynMod(a, b)
			check("%", got, ok, rem, max(sa, sb))
		}
		if c, want := dynCompare(a, b), x.Cmp(y); c != want {
			t.Fatalf("compare(%s, %s) = %d, want %d", types.DNumeric(a).Text(types.NumericT), types.DNumeric(b).Text(types.NumericT), c, want)
		}
	}
}
