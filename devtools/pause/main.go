// Command pause is a pod sandbox's process: it holds the pod's namespaces until it is stopped.
//
// The end-to-end tier's node has no registry to pull Kubernetes' own pause image from, so
// scripts/build-tools.sh builds this one and the tests import it into containerd under the
// sandbox image name containerd is configured with.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signals := make(chan os.Signal, 8)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for sig := range signals {
		if sig != syscall.SIGCHLD {
			return
		}
		// In a pod that shares one PID namespace, orphans are re-parented to the sandbox's
		// process: reap them, or they stay zombies.
		for {
			pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
