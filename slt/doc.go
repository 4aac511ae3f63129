// Package slt runs sqllogictest files against any server that speaks the
// PostgreSQL wire protocol: streamsql itself (the test suite runs every
// testdata/sqllogic/**/*.slt file against an in-process server, and
// `streamsql slt [--url URL] FILES...` runs files against any server), or
// PostgreSQL, to cross-check expected results.
//
// Every statement is sent as one simple query (the simple query protocol
// only), and results are compared as the server's text output.
//
// # File format
//
// The format is the one RisingWave, DataFusion and CockroachDB use. A file
// is a sequence of records separated by blank lines. Lines starting with #
// are comments.
//
//	# comment
//	statement ok
//	CREATE TABLE t (a int, b text)
//
//	statement error <regexp, or a SQLSTATE such as 42P01>
//	SELECT * FROM nope
//
//	statement count 3
//	INSERT INTO t VALUES (1,'x'),(2,'y'),(3,NULL)
//
//	query IT rowsort
//	SELECT a, b FROM t
//	----
//	1 x
//	2 y
//	3 NULL
//
//	query error division by zero
//	SELECT 1/0
//
// The SQL of a record runs from the line after its header to a line holding
// only ---- or to a blank line, and may span lines; it may hold several
// statements separated by semicolons.
//
// Statements:
//
//   - statement ok: the SQL must succeed.
//   - statement count N: the SQL must succeed, and the command tag of its
//     last statement must report N rows (INSERT 0 N, UPDATE N, SELECT N...).
//   - statement error [EXPECTATION]: the SQL must fail. With no expectation
//     any error will do. An expectation of five characters from 0-9 and A-Z,
//     at least one a digit, is a SQLSTATE compared with the error's code;
//     anything else is a regular expression (Go syntax, unanchored) matched
//     against the error's message. Instead of an expectation on the header
//     line, the SQL may be followed by ---- and the text the message must
//     contain (whitespace-normalized), up to a blank line.
//
// Queries:
//
//   - query TYPES [SORTMODE [LABEL]]: the SQL must succeed, and the rows of
//     its last statement that returned rows must be the expected results,
//     written after ---- up to a blank line (a query with no ---- expects no
//     rows). TYPES has one letter per column: I integer, T text, R real, B
//     boolean, D date... any letter is accepted, only the count is checked
//     against the columns returned.
//   - query error [EXPECTATION]: as statement error.
//
// Expected results are written one row per line, values separated by
// whitespace, or, as classic sqllogictest writes them, one value per line
// (rows*columns lines). A query with two or more columns is read in the
// second layout when every expected line has fewer words than the query has
// columns, or when there are exactly rows*columns expected lines. NULL is written NULL and the empty string (empty); every other
// value is the server's text output unchanged. Whitespace runs compare
// equal, so values may contain spaces. Classic hashed results, a single line
// "N values hashing to MD5", are checked against the MD5 of the values,
// each followed by a newline, in sort-mode order.
//
// Sort modes: nosort (the default) compares rows in the order returned;
// rowsort sorts the rows of both the expected and the actual results, as
// strings, before comparing them; valuesort sorts all values of both. A
// LABEL names the result: a later query with the same label must return the
// same result.
//
// A query header may end with "retry N [backoff DURATION]": a query whose
// result differs is run again, up to N more times, DURATION apart (default
// 100ms). Use it for results a streaming system reaches eventually, such as
// a view over a generated source: query I rowsort retry 50 backoff 100ms.
//
// Lines that apply to the record after them:
//
//   - skipif ENGINE and onlyif ENGINE: skip the record (or directive) unless
//     every such condition holds. Engines are streamsql and postgresql (see
//     Options.Engine); other names never match. Skipped records are counted.
//   - connection NAME: run the record on the session NAME, opened on first
//     use; the records around it stay on the default session (which is also
//     called default). Records still run one at a time, in file order, so
//     files can interleave transactions and reads of concurrent sessions.
//
// Directives:
//
//   - halt: stop the file here (skipif and onlyif can make it conditional).
//   - restart: restart the server under test through Options.Restart, then
//     reconnect every session lazily; a no-op when Options.Restart is nil
//     (as against PostgreSQL). Session state does not survive it.
//   - kill: crash the server under test as kill -9 would, through
//     Options.Kill, and start it again: only what it had made durable
//     survives. A no-op when Options.Kill is nil.
//   - sleep DURATION: pause, for example sleep 500ms or sleep 1s.
//   - control sortmode MODE: set the default sort mode for the queries after
//     it. Other control lines, hash-threshold N and subtest NAME are accepted
//     and ignored.
//
// A failing record does not stop the file: RunFile reports every failure,
// each with the file, the line of the record's header, its SQL, and the
// expected and actual outcome.
package slt
