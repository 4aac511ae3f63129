// Package outbox is the exactly-once machinery shared by the sinks that
// deliver to an external system after a checkpoint commits (Kafka,
// PostgreSQL).
//
// A sink encodes each epoch's changes into chunks. At the epoch's barrier
// Writer.Barrier puts them into the sink's own state table (the outbox)
// under (epoch, seq) and seals the table, so they are part of checkpoint
// epoch, and queues them for a Delivery. The Delivery waits until the epoch
// commits, then hands the committed epochs to its Target, which writes them
// and a record of the last epoch written in one transaction of the external
// system. The next barrier deletes the delivered epochs from the outbox.
//
// After a crash the outbox's committed state holds exactly the committed
// epochs that are not known to be delivered: Read returns them, the Target
// reports on Connect the last epoch the external system holds, and the
// epochs after it are delivered again. Epochs that were not committed never
// reach the outbox's committed state, so they are not delivered: the
// dataflow replays them.
package outbox

import (
	"encoding/binary"
	"fmt"

	"github.com/streamsql/streamsql/state"
)

// Epoch is the encoded changes of one epoch, in chunks whose layout is the
// sink's.
type Epoch struct {
	Epoch  uint64
	Chunks [][]byte
	Bytes  int64
}

// Writer is the outbox side of a sink: it is used on the sink's actor
// goroutine only.
type Writer struct {
	t *state.Table
	d *Delivery
	// deleted is the last epoch deleted from the outbox.
	deleted uint64
	keyBuf  []byte
}

// NewWriter returns the writer of outbox t, which hands epochs to d.
func NewWriter(t *state.Table, d *Delivery) *Writer { return &Writer{t: t, d: d} }

// Barrier ends epoch: its chunks (bytes in all) go into the outbox and to
// delivery, the epochs delivered since the last barrier leave the outbox,
// and the outbox is sealed for epoch. It fails if the undelivered epochs
// would exceed the delivery's limit.
func (w *Writer) Barrier(epoch uint64, chunks [][]byte, bytes int64) error {
	if d := w.d.Delivered(); d > w.deleted {
		w.t.DeleteRange(nil, Key(nil, d+1, 0))
		w.deleted = d
	}
	if len(chunks) > 0 {
		// Delivery waits for the epoch to commit, which it cannot before
		// this returns: queueing first leaves no outbox writes behind if
		// the queue is full.
		if err := w.d.add(Epoch{Epoch: epoch, Chunks: chunks, Bytes: bytes}); err != nil {
			return err
		}
		for i, c := range chunks {
			w.keyBuf = Key(w.keyBuf[:0], epoch, uint32(i))
			w.t.Put(w.keyBuf, c)
		}
	}
	w.t.Seal(epoch)
	return nil
}

// Key appends the outbox key of chunk seq of epoch: both big-endian, so
// the outbox is in epoch order.
func Key(buf []byte, epoch uint64, seq uint32) []byte {
	buf = binary.BigEndian.AppendUint64(buf, epoch)
	return binary.BigEndian.AppendUint32(buf, seq)
}

// Read returns the epochs in outbox t, in order. It must run before the
// sink's actor starts, so that it reads the table as its owner.
func Read(t *state.Table) ([]Epoch, error) {
	it, err := t.NewIter(nil, nil)
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var out []Epoch
	for ok := it.First(); ok; ok = it.Next() {
		k := it.Key()
		if len(k) != 12 {
			return nil, fmt.Errorf("outbox key %x", k)
		}
		epoch := binary.BigEndian.Uint64(k)
		if len(out) == 0 || out[len(out)-1].Epoch != epoch {
			out = append(out, Epoch{Epoch: epoch})
		}
		e := &out[len(out)-1]
		c := append([]byte(nil), it.Value()...)
		e.Chunks = append(e.Chunks, c)
		e.Bytes += int64(len(c))
	}
	return out, it.Error()
}
