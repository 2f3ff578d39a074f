package main

import (
	"runtime"
	"runtime/debug"
)

// version is set at build time: -ldflags "-X main.version=v1.2.3". Without
// it the module version or VCS revision from the build info stands in.
var version = ""

// buildVersion is what `gateway version`, the logs and weftgate_build_info
// report.
func buildVersion() string {
	if version != "" {
		return version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			return "devel-" + s.Value[:12]
		}
	}
	return "devel"
}

func versionLine() string {
	return "weftgate " + buildVersion() + " " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH
}
