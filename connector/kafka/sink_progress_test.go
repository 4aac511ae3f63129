package kafka

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestReadProgress reads a sink's last delivered epoch from a progress
// topic that other sinks share: an aborted progress record does not
// count, and one committed after another sink's transaction opened is
// seen once that transaction ends.
func TestReadProgress(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := &SinkConfig{Brokers: c.ListenAddrs(), ProgressTopic: DefaultProgressTopic, TransactionalID: "a"}
	producer := func(id string) *kgo.Client {
		cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.TransactionalID(id), kgo.DefaultProduceTopic(DefaultProgressTopic))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cl.Close)
		return cl
	}
	// txn produces a progress record in a transaction and ends it, unless
	// end is nil.
	txn := func(cl *kgo.Client, key, value string, end *kgo.TransactionEndTry) {
		t.Helper()
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		if err := cl.ProduceSync(ctx, &kgo.Record{Key: []byte(key), Value: []byte(value)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		if end != nil {
			if err := cl.EndTransaction(ctx, *end); err != nil {
				t.Fatal(err)
			}
		}
	}
	commit, abort := kgo.TryCommit, kgo.TryAbort
	a, b := producer("a"), producer("b")
	if got, err := readProgress(ctx, a, cfg); err != nil || got != 0 {
		t.Fatalf("empty topic: %d, %v", got, err)
	}
	txn(a, "a", "5", &commit)
	txn(a, "a", "6", &abort)
	if got, err := readProgress(ctx, a, cfg); err != nil || got != 5 {
		t.Fatalf("got %d, %v; want 5", got, err)
	}
	txn(b, "b", "100", nil) // left open
	txn(a, "a", "7", &commit)
	done := make(chan uint64, 1)
	go func() {
		got, err := readProgress(ctx, a, cfg)
		if err != nil {
			t.Error(err)
		}
		done <- got
	}()
	select {
	case got := <-done:
		t.Fatalf("read %d while another sink's transaction was open below the last record", got)
	case <-time.After(300 * time.Millisecond):
	}
	if err := b.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	if got := <-done; got != 7 {
		t.Fatalf("got %d, want 7", got)
	}
}
