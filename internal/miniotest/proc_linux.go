package miniotest

import (
	"os/exec"
	"syscall"
)

// dieWithParent has the kernel kill the server when the process that
// started it dies, however it dies: a test binary killed at its timeout
// or by a signal runs no cleanup, and a server left behind would keep its
// ports and its data directory's files open.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
