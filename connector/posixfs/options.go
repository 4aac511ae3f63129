// Package posixfs is streamsql's posix_fs source: it reads the files of a
// directory that match a pattern, each once, as CSV lines, JSON lines or
// Parquet, in Arrow batches from a recorded position (the engine records
// the position of every file at each checkpoint).
//
// The contract with the writer of the files is RisingWave's: a file is
// complete when it appears under a matching name (write it under another
// name, a hidden one for example, then rename it). A file is identified by
// its name: one read is not read again, even if it is replaced.
package posixfs

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/streamsql/streamsql/sqlerr"
)

// Options are a posix_fs source's WITH and FORMAT options, checked.
type Options struct {
	// Root is the directory read (posix_fs.root); Pattern the glob that a
	// file's base name must match (match_pattern, default *).
	Root, Pattern string
	// Encode is csv, json or parquet.
	Encode string
	// Delimiter and WithoutHeader are ENCODE CSV's options: files start
	// with a header line naming the columns unless WithoutHeader.
	Delimiter     byte
	WithoutHeader bool
	// FailOnError: a record that does not decode fails the source instead
	// of being skipped and counted (error.policy = 'fail').
	FailOnError bool
	// Refresh is how often the directory is listed for new files.
	Refresh time.Duration
}

// optionNames are the options a posix_fs source accepts (the FORMAT clause
// adds format, encode and encode.*).
var optionNames = map[string]bool{
	"connector": true, "posix_fs.root": true, "match_pattern": true, "refresh.interval.sec": true,
	"error.policy": true, "format": true, "encode": true, "encode.delimiter": true, "encode.without_header": true,
}

// DefaultRefresh is how often the directory is listed without
// refresh.interval.sec.
const DefaultRefresh = 5 * time.Second

// ParseOptions checks a posix_fs source's options. Errors are 22023
// (invalid parameter value) or 0A000 (a format streamsql does not read),
// and name the option. It does not look at the directory (CheckRoot does).
func ParseOptions(opts map[string]string) (*Options, error) {
	var unknown []string
	for k := range opts {
		if !optionNames[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, invalidValue("unknown posix_fs source option \"%s\"", unknown[0]).
			WithHint("The options are posix_fs.root, match_pattern, refresh.interval.sec and error.policy.")
	}
	o := &Options{Root: opts["posix_fs.root"], Pattern: "*", Delimiter: ',', Refresh: DefaultRefresh}
	if o.Root == "" {
		return nil, invalidValue("a posix_fs source needs the option posix_fs.root (the directory to read)")
	}
	if p, ok := opts["match_pattern"]; ok {
		if _, err := path.Match(p, ""); err != nil || p == "" || strings.Contains(p, "/") {
			return nil, invalidValue("match_pattern must be a glob of file names (*, ?, [...]), not '%s'", p)
		}
		o.Pattern = p
	}
	if v, ok := opts["refresh.interval.sec"]; ok {
		sec, err := strconv.ParseFloat(v, 64)
		if err != nil || !(sec > 0) || sec > 86400 {
			return nil, invalidValue("refresh.interval.sec must be a positive number of seconds, not '%s'", v)
		}
		o.Refresh = time.Duration(sec * float64(time.Second))
	}
	switch p := opts["error.policy"]; p {
	case "", "skip":
	case "fail":
		o.FailOnError = true
	default:
		return nil, invalidValue("error.policy must be 'skip' or 'fail', not '%s'", p)
	}
	if err := o.parseFormat(opts); err != nil {
		return nil, err
	}
	return o, nil
}

// parseFormat reads FORMAT ... ENCODE ... and the encoding's options.
func (o *Options) parseFormat(opts map[string]string) error {
	format, encode := opts["format"], opts["encode"]
	if format == "" {
		return invalidValue("a posix_fs source needs FORMAT PLAIN ENCODE CSV, JSON or PARQUET")
	}
	if format != "plain" {
		return sqlerr.Unsupported("FORMAT %s on a posix_fs source (it reads FORMAT PLAIN)", strings.ToUpper(format))
	}
	switch encode {
	case "csv", "json", "parquet":
		o.Encode = encode
	default:
		return sqlerr.Unsupported("FORMAT PLAIN ENCODE %s (a posix_fs source reads ENCODE CSV, JSON and PARQUET)", strings.ToUpper(encode))
	}
	if d, ok := opts["encode.delimiter"]; ok {
		if encode != "csv" {
			return invalidValue("delimiter is an option of ENCODE CSV")
		}
		if len(d) != 1 || d[0] == '\n' || d[0] == '\r' || d[0] == '"' {
			return invalidValue("the CSV delimiter must be a single one-byte character other than a quote or line break, not '%s'", d)
		}
		o.Delimiter = d[0]
	}
	if v, ok := opts["encode.without_header"]; ok {
		if encode != "csv" {
			return invalidValue("without_header is an option of ENCODE CSV")
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			return invalidValue("without_header must be 'true' or 'false', not '%s'", v)
		}
		o.WithoutHeader = b
	}
	return nil
}

// CheckRoot checks that the root is a directory that can be listed: 58P01
// if it does not exist, 22023 if it is not a directory.
func (o *Options) CheckRoot() error {
	st, err := os.Stat(o.Root)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return sqlerr.New(sqlerr.UndefinedFile, "posix_fs.root \"%s\" does not exist", o.Root)
	case err != nil:
		return sqlerr.New(sqlerr.IOError, "posix_fs.root \"%s\": %v", o.Root, err)
	case !st.IsDir():
		return invalidValue("posix_fs.root \"%s\" is not a directory", o.Root)
	}
	_, err = List(o.Root, o.Pattern)
	if err != nil {
		return sqlerr.New(sqlerr.IOError, "posix_fs.root \"%s\": %v", o.Root, err)
	}
	return nil
}

func invalidValue(format string, args ...any) *sqlerr.Error {
	return sqlerr.New(sqlerr.InvalidParameterValue, format, args...)
}
