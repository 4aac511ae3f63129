//go:build !linux

package pgtest

import (
	"errors"
	"os"
	"os/exec"
)

type osUser struct{ uid, gid int }

func serverUser() (*osUser, error) {
	if os.Geteuid() == 0 {
		return nil, errors.New("pgtest: PostgreSQL refuses to run as root; on this platform pgtest cannot switch users: run as another user")
	}
	return nil, nil
}

func runAs(cmd *exec.Cmd, u *osUser) {}

func setParentDeathSignal(cmd *exec.Cmd) {}

// quit stops the postmaster. Without SIGQUIT it is killed outright.
func quit(p *os.Process) error { return p.Kill() }
