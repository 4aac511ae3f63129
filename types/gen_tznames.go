//go:build ignore

// gen_tznames writes tznames.go, the names of the zones in Go's embedded
// tz database: go generate ./types
package main

import (
	"archive/zip"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strings"
)

func main() {
	r, err := zip.OpenReader(runtime.GOROOT() + "/lib/time/zoneinfo.zip")
	if err != nil {
		panic(err)
	}
	var names []string
	for _, f := range r.File {
		if !strings.HasSuffix(f.Name, "/") {
			names = append(names, f.Name)
		}
	}
	sort.Strings(names)
	w := os.Stdout
	fmt.Fprintln(w, "// Code generated from Go's lib/time/zoneinfo.zip; DO NOT EDIT.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "package types")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "// zoneNames are the names of the time zones of the embedded tz database,")
	fmt.Fprintln(w, "// for case-insensitive lookup (PostgreSQL matches zone names ignoring case).")
	fmt.Fprintln(w, "const zoneNames = \"\" +")
	for i, n := range names {
		sep := " +"
		if i == len(names)-1 {
			sep = ""
		}
		fmt.Fprintf(w, "\t%q%s\n", n+" ", sep)
	}
}
