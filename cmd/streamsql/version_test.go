package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestVersionFlag checks that streamsql --version prints the version and
// the server_version clients see, and does not start a server.
func TestVersionFlag(t *testing.T) {
	root := newRootCmd()
	root.Version = versionText()
	root.SetVersionTemplate("{{.Version}}")
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs([]string{"--version"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); !strings.HasPrefix(s, "streamsql ") || !strings.Contains(s, "server_version 15.0") {
		t.Fatalf("--version printed %q", s)
	}
}
