// Package version says which build of a command is running, for `manager --version` and
// `contract-server --version` and the first line each logs.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Version is set when release builds link the binary (make image):
//
//	-ldflags "-X github.com/object-storage-manager/object-storage-manager/internal/version.Version=v0.1.0"
//
// Empty, it falls back to the module version `go install` records, then to "devel".
var Version = ""

// Get returns the version of this binary.
func Get() string {
	if Version != "" {
		return Version
	}
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return "devel"
}

// Line is what --version prints: the command, its version, and the Go toolchain and platform it
// was built with.
func Line(command string) string {
	return fmt.Sprintf("%s %s (%s, %s/%s)", command, Get(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
