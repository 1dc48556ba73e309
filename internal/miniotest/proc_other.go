//go:build !linux

package miniotest

import "os/exec"

// dieWithParent does nothing where the kernel offers no parent-death
// signal: a server left behind by a killed test is stopped by hand.
func dieWithParent(*exec.Cmd) {}
