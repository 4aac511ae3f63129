package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/streamsql/streamsql/engine"
)

// versionText is what streamsql --version prints: the module version (or
// "devel"), the VCS revision the binary was built from when known, the
// PostgreSQL version the server reports to clients and the Go version.
func versionText() string {
	version, revision, dirty := "devel", "", false
	if info, ok := debug.ReadBuildInfo(); ok {
		if v := info.Main.Version; v != "" && v != "(devel)" {
			version = v
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				revision = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	if len(revision) > 12 {
		revision = revision[:12]
	}
	if dirty {
		revision += "-dirty"
	}
	s := "streamsql " + version
	if revision != "" {
		s += " (" + revision + ")"
	}
	return fmt.Sprintf("%s, server_version %s, %s %s/%s\n", s, engine.ServerVersion, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
