package exec

import (
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/sqlerr"
)

func TestBudget(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	b := NewBudget(1000)
	alloc := b.Allocator(mem)
	buf := alloc.Allocate(600)
	if err := b.Check(0); err != nil {
		t.Fatalf("600 of 1000 bytes: %v", err)
	}
	buf = alloc.Reallocate(900, buf)
	if got := b.Used(); got != 900 {
		t.Fatalf("used after reallocating to 900: %d", got)
	}
	err := b.Check(200)
	var se *sqlerr.Error
	if !errors.As(err, &se) || se.Code != sqlerr.OutOfMemory {
		t.Fatalf("1100 of 1000 bytes: got %v, want 53200", err)
	}
	b.Reserve(50)
	alloc.Free(buf)
	if got := b.Used(); got != 50 {
		t.Fatalf("used after free: %d, want the 50 reserved", got)
	}
	if err := b.Check(0); err != nil {
		t.Fatal(err)
	}
	if b.Peak() != 1100 {
		t.Fatalf("peak %d, want 1100", b.Peak())
	}
	var none *Budget
	if err := none.Check(1 << 40); err != nil {
		t.Fatalf("nil budget: %v", err)
	}
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0B", 1000: "1000B", 1024: "1kB", 1536: "1536B", 4 << 20: "4MB", 3 << 30: "3GB", 2 << 40: "2TB"} {
		if got := FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %s, want %s", n, got, want)
		}
	}
}
