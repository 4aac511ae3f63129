package sqlerr

// SQLSTATEs of connection admission and authentication.
const (
	InvalidPassword    = "28P01"
	TooManyConnections = "53300"
)

// SQLSTATEs of roles and privileges.
const (
	ReservedName          = "42939"
	InvalidGrantOperation = "0LP01"
	PrivilegeNotGranted   = "01007"
)
