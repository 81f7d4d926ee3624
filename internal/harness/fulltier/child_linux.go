package fulltier

import (
	"os/exec"
	"syscall"
)

// dieWithTest makes the child get SIGKILL when the test binary dies (a go
// test -timeout panic cancels no context). A pyspark driver's JVM follows
// it: the gateway exits when the driver's pipe closes.
func dieWithTest(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
