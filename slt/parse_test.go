package slt

import (
	"strings"
	"testing"
	"time"
)

func mustParse(t *testing.T, text string) []record {
	t.Helper()
	recs, err := parse("test.slt", text)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return recs
}

func TestParseRecords(t *testing.T) {
	recs := mustParse(t, `# comment
statement ok
CREATE TABLE t (a int, b text)

statement error <optional regex>
SELECT * FROM nope

statement count 3
INSERT INTO t VALUES (1,'x'),(2,'y'),(3,NULL)

query IT rowsort
SELECT a, b
# a comment inside the SQL is dropped
  FROM t
----
1 x
2 y
3 NULL

query error division by zero
SELECT 1/0
`)
	if len(recs) != 5 {
		t.Fatalf("got %d records, want 5", len(recs))
	}
	want := []struct {
		kind   recordKind
		line   int
		header string
		sql    string
	}{
		{kindStatement, 2, "statement ok", "CREATE TABLE t (a int, b text)"},
		{kindStatement, 5, "statement error <optional regex>", "SELECT * FROM nope"},
		{kindStatement, 8, "statement count 3", "INSERT INTO t VALUES (1,'x'),(2,'y'),(3,NULL)"},
		{kindQuery, 11, "query IT rowsort", "SELECT a, b\n  FROM t"},
		{kindQuery, 20, "query error division by zero", "SELECT 1/0"},
	}
	for i, w := range want {
		r := recs[i]
		if r.kind != w.kind || r.line != w.line || r.header != w.header || r.sql != w.sql {
			t.Errorf("record %d = {%v %d %q %q}, want %v", i, r.kind, r.line, r.header, r.sql, w)
		}
	}
	if recs[0].wantError != nil || recs[0].wantCount != -1 {
		t.Errorf("statement ok expects %v, count %d", recs[0].wantError, recs[0].wantCount)
	}
	if e := recs[1].wantError; e == nil || e.pattern == nil || e.pattern.String() != "<optional regex>" || e.code != "" {
		t.Errorf("statement error expectation = %+v", e)
	}
	if recs[2].wantCount != 3 {
		t.Errorf("count = %d", recs[2].wantCount)
	}
	q := recs[3]
	if q.types != "IT" || q.sort != rowSort || strings.Join(q.expected, "|") != "1 x|2 y|3 NULL" {
		t.Errorf("query = types %q sort %v expected %q", q.types, q.sort, q.expected)
	}
	if e := recs[4].wantError; e == nil || e.pattern == nil || e.pattern.String() != "division by zero" {
		t.Errorf("query error expectation = %+v", e)
	}
}

func TestParseErrorExpectations(t *testing.T) {
	recs := mustParse(t, `statement error 42P01
SELECT 1

statement error ERROR
SELECT 1

statement error XX000
SELECT 1

statement error 42p01
SELECT 1

statement error
SELECT 1
----
relation "nope"
  does not exist

query error
SELECT 1
`)
	check := func(i int, code, pattern, text string) {
		t.Helper()
		e := recs[i].wantError
		gotPattern := ""
		if e.pattern != nil {
			gotPattern = e.pattern.String()
		}
		if e.code != code || gotPattern != pattern || e.text != text {
			t.Errorf("record %d: code %q pattern %q text %q; want %q %q %q", i, e.code, gotPattern, e.text, code, pattern, text)
		}
	}
	check(0, "42P01", "", "")
	check(1, "", "ERROR", "") // five letters but no digit: a regexp
	check(2, "XX000", "", "")
	check(3, "", "42p01", "") // SQLSTATEs are upper case
	check(4, "", "", "relation \"nope\"\ndoes not exist")
	check(5, "", "", "")
	if recs[4].sql != "SELECT 1" {
		t.Errorf("sql = %q", recs[4].sql)
	}
}

func TestParseConditionsAndDirectives(t *testing.T) {
	recs := mustParse(t, "hash-threshold 10\r\n"+`control sortmode valuesort
subtest whatever

skipif postgresql
onlyif StreamSQL
statement ok
SELECT 1

connection other
query I
SELECT 1

connection default
query I nosort
SELECT 1

control sortmode rowsort

query I
SELECT 1

onlyif streamsql
restart

sleep 250ms

skipif postgresql
halt
`)
	if len(recs) != 7 {
		t.Fatalf("got %d records, want 7", len(recs))
	}
	if c := recs[0].conditions; len(c) != 2 || c[0] != (condition{false, "postgresql"}) || c[1] != (condition{true, "streamsql"}) {
		t.Errorf("conditions = %v", c)
	}
	if recs[0].connection != "" || recs[0].sql != "SELECT 1" {
		t.Errorf("record 0: connection %q sql %q", recs[0].connection, recs[0].sql)
	}
	if recs[1].connection != "other" || len(recs[1].conditions) != 0 || recs[1].sort != valueSort {
		t.Errorf("record 1: connection %q conditions %v sort %v", recs[1].connection, recs[1].conditions, recs[1].sort)
	}
	if recs[2].connection != "" || recs[2].sort != noSort {
		t.Errorf("record 2: connection %q (\"default\" is the default connection), sort %v", recs[2].connection, recs[2].sort)
	}
	if recs[3].sort != rowSort {
		t.Errorf("record 3: sort %v, want rowsort from control sortmode", recs[3].sort)
	}
	if recs[4].kind != kindRestart || len(recs[4].conditions) != 1 || recs[4].line != 24 {
		t.Errorf("record 4: %v line %d conditions %v", recs[4].kind, recs[4].line, recs[4].conditions)
	}
	if recs[5].kind != kindSleep || recs[5].sleep != 250*time.Millisecond {
		t.Errorf("record 5: %v %v", recs[5].kind, recs[5].sleep)
	}
	if recs[6].kind != kindHalt || len(recs[6].conditions) != 1 {
		t.Errorf("record 6: %v %v", recs[6].kind, recs[6].conditions)
	}
}

func TestParseQueryResults(t *testing.T) {
	recs := mustParse(t, `query I
SELECT 1
----

query III nosort mylabel
SELECT 1, 2, 3
----
1
2
3

query I
SELECT 1 WHERE false
`)
	if len(recs) != 3 {
		t.Fatalf("got %d records", len(recs))
	}
	if len(recs[0].expected) != 0 {
		t.Errorf("empty result block: %q", recs[0].expected)
	}
	if recs[1].label != "mylabel" || len(recs[1].expected) != 3 || recs[1].types != "III" {
		t.Errorf("record 1: label %q types %q expected %q", recs[1].label, recs[1].types, recs[1].expected)
	}
	if len(recs[2].expected) != 0 || recs[2].sql != "SELECT 1 WHERE false" {
		t.Errorf("record 2: %q %q", recs[2].sql, recs[2].expected)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		text string
		want string // the whole error
	}{
		{"statement ok\nSELECT 1\n\nbogus\n", "test.slt:4: unknown record type \"bogus\""},
		{"\n\nstatement ok\n\n", "test.slt:3: statement record has no SQL"},
		{"statement maybe\nSELECT 1\n", "test.slt:1: statement needs ok, error or count, not \"maybe\""},
		{"statement count x\nSELECT 1\n", "test.slt:1: statement count takes a number, not \"x\""},
		{"statement ok\nSELECT 1\n----\n1\n", "test.slt:1: ---- after a statement that expects no error"},
		{"statement error (\nSELECT 1\n", "test.slt:1: bad error pattern"},
		{"statement error 42P01\nSELECT 1\n----\nmessage\n", "test.slt:1: an error record takes either a pattern"},
		{"\nquery I wrongsort\nSELECT 1\n", "test.slt:2: unknown sort mode \"wrongsort\""},
		{"query 1\nSELECT 1\n", "test.slt:1: query column types must be letters"},
		{"query\nSELECT 1\n", "test.slt:1: query needs column types"},
		{"query I\n----\n1\n", "test.slt:1: query record has no SQL"},
		{"statement ok\nSELECT 1\n\nskipif postgresql\n", "test.slt:4: skipif, onlyif or connection with no record after it"},
		{"skipif postgresql\ncontrol sortmode rowsort\n", "test.slt:1: skipif, onlyif and connection cannot apply to control"},
		{"connection a\nhalt\n", "test.slt:1: connection applies only to statement and query records"},
		{"sleep forever\n", "test.slt:1: sleep takes a duration"},
		{"control sortmode sideways\n", "test.slt:1: unknown sort mode \"sideways\""},
		{"hash-threshold\n", "test.slt:1: hash-threshold takes a number"},
	} {
		_, err := parse("test.slt", tc.text)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("parse(%q) = %v, want %q", tc.text, err, tc.want)
		}
	}
}

func TestParseQueryRetry(t *testing.T) {
	recs := mustParse(t, `query I rowsort retry 30 backoff 20ms
SELECT 1
----
1

query II retry 5
SELECT 1, 2
----
1 2

query I nosort label retry 2 backoff 1s
SELECT 1
----
1
`)
	cases := []struct {
		retries int
		backoff time.Duration
		sort    sortMode
		label   string
	}{
		{30, 20 * time.Millisecond, rowSort, ""},
		{5, 100 * time.Millisecond, noSort, ""},
		{2, time.Second, noSort, "label"},
	}
	for i, c := range cases {
		r := recs[i]
		if r.retries != c.retries || r.backoff != c.backoff || r.label != c.label {
			t.Errorf("record %d: retries %d backoff %v label %q, want %+v", i, r.retries, r.backoff, r.label, c)
		}
		if i != 1 && r.sort != c.sort {
			t.Errorf("record %d: sort %v, want %v", i, r.sort, c.sort)
		}
	}
	for _, bad := range []string{"query I retry x\nSELECT 1\n", "query I retry 3 backoff soon\nSELECT 1\n", "query I retry 3 backoff 1s extra\nSELECT 1\n"} {
		if _, err := parse("bad.slt", bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}
