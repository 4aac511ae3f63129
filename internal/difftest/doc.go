// Package difftest checks streamsql's core promise with a randomized
// differential test: every materialized view equals its defining query run in
// batch by PostgreSQL over the same committed data, after any sequence of
// inserts, updates, deletes, view creations and drops, and restarts.
//
// The generator (gen.go) builds a random schema, random view definitions and
// random DML from a seed; it consults only PostgreSQL (never streamsql) for
// the facts it needs, such as which primary keys are taken, so a seed always
// produces the same statement history. Results are compared as multisets of
// rows with numbers compared numerically (compare.go). The test itself lives
// in difftest_test.go; see its flags for reproducing a seed.
//
// TestEventTime (eventtime_test.go, generators in eventtime_gen.go and
// eventtime_views.go) does the same for watermarks, TUMBLE and HOP windows,
// EMIT ON WINDOW CLOSE, window joins, temporal filters, TopN (global, per
// group, DISTINCT ON, per window), interval joins, SESSION windows (in FROM
// and in OVER) and ASOF joins, against a model on PostgreSQL that drops late
// rows exactly as streamsql must, with the barrier clock held by the test
// and in-process crashes.
package difftest
