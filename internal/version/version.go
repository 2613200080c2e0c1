// Package version reports the build's version. The values are stamped at
// link time by hack/build.sh (-X flags) and never change at run time.
package version

import (
	"runtime"
	"runtime/debug"
)

// Stamped by the linker.
var (
	gitVersion = "v0.0.0-dev"
	gitCommit  = ""
)

// Info describes the build.
type Info struct {
	Version   string `json:"version"`
	GitCommit string `json:"gitCommit,omitempty"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
	// Kubernetes is the k8s.io/client-go line the binary was built with.
	Kubernetes string `json:"kubernetesLibraries,omitempty"`
}

// Get returns the build's version information.
func Get() Info {
	info := Info{Version: gitVersion, GitCommit: gitCommit, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range bi.Deps {
			if dep.Path == "k8s.io/client-go" {
				info.Kubernetes = dep.Version
			}
		}
	}
	return info
}
