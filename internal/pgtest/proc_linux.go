package pgtest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"syscall"
)

// osUser is the account initdb and postgres run as.
type osUser struct{ uid, gid int }

// serverUser returns nil when the process may run PostgreSQL itself, and the
// postgres OS user when the process is root (PostgreSQL refuses to run as
// root).
func serverUser() (*osUser, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("pgtest: running as root, and PostgreSQL refuses to run as root, "+
			"but there is no postgres OS user to run it as (installing the postgresql package creates one): %w", err)
	}
	uid, err1 := strconv.Atoi(u.Uid)
	gid, err2 := strconv.Atoi(u.Gid)
	if err := errors.Join(err1, err2); err != nil {
		return nil, fmt.Errorf("pgtest: postgres OS user: %w", err)
	}
	return &osUser{uid: uid, gid: gid}, nil
}

// runAs makes cmd run as u.
func runAs(cmd *exec.Cmd, u *osUser) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(u.uid), Gid: uint32(u.gid)}
}

// setParentDeathSignal asks the kernel to shut postgres down immediately if
// this process dies without calling Stop, so crashed test binaries do not
// leave servers behind.
func setParentDeathSignal(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGQUIT
}

// quit asks the postmaster for an immediate shutdown.
func quit(p *os.Process) error { return p.Signal(syscall.SIGQUIT) }
