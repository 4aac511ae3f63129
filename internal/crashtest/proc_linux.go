package crashtest

import (
	"os/exec"
	"syscall"
)

// setParentDeathSignal makes the kernel SIGKILL the server if the test
// process dies first, so an aborted test run leaves no server behind.
func setParentDeathSignal(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
