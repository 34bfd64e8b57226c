// Command pause is the sandbox ("pause") container of make dev's real node: it holds a pod's
// namespaces open and does nothing else until it is told to stop. osm-dev builds it here and
// imports it into containerd as an image, so the node needs no registry.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	// As PID 1 of the pod it would otherwise ignore SIGTERM and SIGINT (a namespace's init gets
	// no default action), and only SIGKILL would end it.
	signals := make(chan os.Signal, 8)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for s := range signals {
		if s != syscall.SIGCHLD {
			return
		}
		// With a shared PID namespace, orphans of the pod's containers become its children:
		// collect those that have exited.
		for {
			var ws syscall.WaitStatus
			if pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil); pid <= 0 || err != nil {
				break
			}
		}
	}
}
