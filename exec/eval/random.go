package eval

import (
	"math"
	"math/rand/v2"
	"sync"

	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// Random is a session's generator for random(): setseed(x) reseeds it, so
// the values random() returns after it are the same every time (not the
// values PostgreSQL returns after the same seed: the generator is PCG, not
// PostgreSQL's xoroshiro128**). It is safe for concurrent use.
type Random struct {
	mu  sync.Mutex
	pcg *rand.PCG
	r   *rand.Rand
}

// NewRandom returns a generator seeded at random.
func NewRandom() *Random {
	pcg := rand.NewPCG(rand.Uint64(), rand.Uint64())
	return &Random{pcg: pcg, r: rand.New(pcg)}
}

// Float64 returns the next value in [0, 1).
func (r *Random) Float64() float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.r.Float64()
}

// Seed is setseed(x): x must be in [-1, 1].
func (r *Random) Seed(x float64) *sqlerr.Error {
	if math.IsNaN(x) || x < -1 || x > 1 {
		return sqlerr.New(sqlerr.InvalidParameterValue, "setseed parameter %g is out of allowed range [-1,1]", x)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pcg.Seed(math.Float64bits(x), 0x9e3779b97f4a7c15)
	return nil
}

// random is random(): from the session's generator when there is one.
func random(k *kctx, _ []types.Datum) (types.Datum, *sqlerr.Error) {
	if k.rnd != nil {
		return types.DFloat(k.rnd.Float64()), nil
	}
	return types.DFloat(rand.Float64()), nil
}

// setseed is setseed(x): it returns void, which prints as an empty string.
// Outside a session (no generator) it only checks x.
func setseed(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
	r := k.rnd
	if r == nil {
		r = NewRandom()
	}
	if err := r.Seed(a[0].F); err != nil {
		return types.Null, err
	}
	return types.DText(""), nil
}
