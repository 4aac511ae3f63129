package barrier

// HistoryAfter returns the kept checkpoints of epochs above epoch, oldest
// first, up to the first not yet completed or subsumed (excluded: one in
// progress, or failed or timed out, may still complete): the records that
// will not change again.
func (c *Coordinator) HistoryAfter(epoch uint64) []CheckpointRecord {
	c.mu.Lock()
	defer c.mu.Unlock()
	i := len(c.history)
	for i > 0 && c.history[i-1].Epoch > epoch {
		i--
	}
	var out []CheckpointRecord
	for _, r := range c.history[i:] {
		if r.Status != StatusCompleted && r.Status != StatusSubsumed {
			break
		}
		out = append(out, r)
	}
	return out
}
