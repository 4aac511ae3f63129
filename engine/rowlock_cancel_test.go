package engine

import (
	"context"
	"errors"
	"runtime"
	"testing"
)

// TestLockCancelWins: a statement cancelled before it takes a row lock
// fails with the cancel's error and does not hold the lock, whether the
// cancel came before it asked for the lock (the lock free) or as the
// holder released it (delivered in the waiter just woken by the release).
func TestLockCancelWins(t *testing.T) {
	const table = 1
	key := []byte("k")
	held := func(m *lockManager, o *lockOwner) bool {
		m.mu.Lock()
		defer m.mu.Unlock()
		l := m.tables[table][string(key)]
		return l != nil && l.holder == o
	}

	t.Run("before the wait", func(t *testing.T) {
		var m lockManager
		o := newLockOwner(1)
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(errStatementTimeout)
		if _, err := m.lock(ctx, o, table, key, 0); !errors.Is(err, errStatementTimeout) {
			t.Fatalf("lock: %v, want %v", err, errStatementTimeout)
		}
		if held(&m, o) {
			t.Fatal("a cancelled statement took a free lock")
		}
	})

	t.Run("as the holder releases", func(t *testing.T) {
		var m lockManager
		holder, waiter := newLockOwner(1), newLockOwner(2)
		if _, err := m.lock(context.Background(), holder, table, key, 0); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		m.testHookFreed = cancel
		done := make(chan error, 1)
		go func() {
			waited, err := m.lock(ctx, waiter, table, key, 0)
			if !waited && err == nil {
				err = errors.New("took the lock without waiting")
			}
			done <- err
		}()
		// The release must find the waiter waiting.
		for !isWaiting(&m, waiter) {
			select {
			case err := <-done:
				t.Fatalf("lock returned before waiting: %v", err)
			default:
				runtime.Gosched()
			}
		}
		m.releaseAll(holder)
		if err := <-done; !errors.Is(err, errCanceled) {
			t.Fatalf("lock: %v, want %v", err, errCanceled)
		}
		if held(&m, waiter) {
			t.Fatal("a statement cancelled as the lock was freed took it")
		}
	})
}

// isWaiting reports whether o waits for a lock of m.
func isWaiting(m *lockManager, o *lockOwner) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return o.waiting != nil
}
