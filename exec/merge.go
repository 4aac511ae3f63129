package exec

// NewMerge returns the node that merges n streams of the same relation (the
// outputs of the n actors of a parallel fragment) into next: it forwards
// every batch, a barrier once it has arrived on every input, the end of the
// stream once every input has ended, and on each of the watermark columns
// cols the smallest watermark of the inputs. Port(i) is input i's Output.
// It is driven by one goroutine, the actor reading the n streams, whose
// alignment (exactly-once mode) keeps any input from running an epoch ahead.
func NewMerge(n int, cols []int, next Output) *MultiNode {
	return NewMultiNode(NewUnion(n, cols), n, next)
}
