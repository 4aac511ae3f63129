package eval

import (
	"testing"

	"github.com/streamsql/streamsql/ir"
)

// TestEveryArrayFunctionHasAKernel checks that the evaluator implements
// every polymorphic array function the binder can produce.
func TestEveryArrayFunctionHasAKernel(t *testing.T) {
	names := ir.ArrayFunctionNames()
	if len(names) < 30 {
		t.Fatalf("only %d array functions", len(names))
	}
	for _, n := range names {
		if arrayKernels[n] == nil {
			t.Errorf("array function %s has no kernel", n)
		}
	}
}
