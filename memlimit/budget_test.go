package memlimit

import "testing"

func TestPoolAccounts(t *testing.T) {
	b := New(1000)
	p := b.NewPool("operator_caches", 100)
	b.Report("block_cache", 200, func() int64 { return 42 })
	a1, a2 := p.NewAccount(), p.NewAccount()
	a1.Grow(40)
	a2.Grow(40)
	if got := p.Used(); got != 80 {
		t.Fatalf("pool used %d, want 80", got)
	}
	if a1.Target() != 40 {
		t.Fatalf("within the share the target is what the account holds, got %d", a1.Target())
	}
	a2.Grow(160) // pool 240 > 100
	if got, want := a1.Target(), int64(40*100/240); got != want {
		t.Fatalf("a1 target %d, want %d", got, want)
	}
	if got, want := a2.Target(), int64(200*100/240); got != want {
		t.Fatalf("a2 target %d, want %d", got, want)
	}
	if a1.Target()+a2.Target() > p.Share() {
		t.Fatalf("targets %d+%d exceed the share", a1.Target(), a2.Target())
	}
	a2.Close()
	if p.Used() != 40 || a2.Used() != 0 {
		t.Fatalf("after close: pool %d, account %d", p.Used(), a2.Used())
	}
	u := b.Usage()
	if len(u) != 2 || u[0] != (Usage{"operator_caches", 100, 40}) || u[1] != (Usage{"block_cache", 200, 42}) {
		t.Fatalf("usage %+v", u)
	}
}

func TestNoLimit(t *testing.T) {
	b := New(0)
	if b.Share(1, 4, 16) != 0 {
		t.Fatal("a budget without a limit has no shares")
	}
	p := b.NewPool("operator_caches", b.Share(1, 4, 0))
	a := p.NewAccount()
	a.Grow(1 << 40)
	if a.Target() != a.Used() {
		t.Fatal("a pool without a share never asks to shrink")
	}
	var nilPool *Pool
	n := nilPool.NewAccount()
	n.Grow(10)
	if n.Target() != 10 || nilPool.Used() != 0 {
		t.Fatal("nil pool")
	}
}

func TestShare(t *testing.T) {
	b := New(1 << 30)
	if got := b.Share(1, 8, 0); got != 128<<20 {
		t.Fatalf("an eighth of 1GB: %d", got)
	}
	if got := b.Share(1, 1<<30, 4<<20); got != 4<<20 {
		t.Fatalf("floor: %d", got)
	}
}
