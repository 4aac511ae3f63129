package posixfs

import (
	"os"
	"path"
	"sort"
)

// File is a file of the root that matches the pattern.
type File struct {
	Name string // the base name
	Size int64
}

// List returns the regular files directly in root whose names match
// pattern, sorted by name. Subdirectories are not read, and hidden files
// (names starting with a dot: writers' temporary names) never match.
func List(root, pattern string) ([]File, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	var files []File
	for _, e := range entries {
		name := e.Name()
		if name[0] == '.' || !e.Type().IsRegular() {
			continue
		}
		if ok, _ := path.Match(pattern, name); !ok {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // removed since it was listed
		}
		files = append(files, File{Name: name, Size: info.Size()})
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	return files, nil
}
