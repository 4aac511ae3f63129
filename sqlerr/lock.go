package sqlerr

// The SQLSTATEs of row lock waits.
const (
	// DeadlockDetected: a wait for a row lock closed a cycle of waits.
	DeadlockDetected = "40P01"
	// LockNotAvailable: a wait for a row lock outlasted lock_timeout.
	LockNotAvailable = "55P03"
)
