// Package state is streamsql's state store: the keyed tables of stateful
// operators, tables and materialized views, kept in one Pebble database and
// checkpointed incrementally at epoch boundaries.
//
// # Epochs, layers and commits
//
// The checkpoint coordinator numbers epochs 1, 2, 3, .... When barrier n
// reaches an operator, the operator calls Table.Seal(n) on each of its tables:
// the table's writes since its previous Seal become epoch n's layer, an
// immutable in-memory B-tree of point writes plus a list of range deletions.
// Writes after the Seal go to a new current layer. When every operator has
// sealed epoch n, the coordinator calls Store.Commit(n), which writes the
// sealed layers of epoch <= n of every table, oldest first, and the
// committed-epoch marker as one atomic, synced Pebble batch, then drops those
// layers. A commit's size follows the number of keys changed since the last
// one, not the size of the state.
//
// Besides Put and Delete, a table takes range deletions (DeleteRange, Clear):
// they drop the current layer's keys in the range at once and hide older
// layers' and Pebble's, and commit as one Pebble range tombstone.
//
// Reads through a Table see every write so far: the current layer, then the
// sealed layers newest first, then Pebble. A write in a newer layer (a value,
// a point deletion or a range deletion) hides everything older for its keys.
// Batch SELECTs read a Snapshot instead: a Pebble snapshot of the last
// committed epoch, consistent across all tables.
//
// After a crash the store reopens at its committed epoch: the writes of later
// epochs are gone, those of committed ones all there.
//
// # Key layout
//
// Every Pebble key starts with a one-byte prefix:
//
//	0x01 + name          system keys:
//	  0x01 "format"        store format version (uvarint); see FormatVersion
//	  0x01 "epoch"         last committed epoch (8 bytes big-endian)
//	0x02 + id + key      the rows of table id (4 bytes big-endian), key being
//	                     the table-relative key the operator chose
//
// So one table is a contiguous key range, tables sort by id, and a range
// deletion of a whole table is one Pebble range tombstone. TableID 0 is the
// catalog's table.
//
// Operator keys are normally memcomparable encodings of key columns
// (AppendKey, KeyEncoder: byte order is SQL order, NULL first, a prefix of the
// columns is a byte prefix of the key) and values compact row encodings
// (RowCodec). See keycodec.go and encoding.go for the exact formats.
//
// # Concurrency
//
// A Table is written and read by one goroutine, its owner; the coordinator
// runs Commit on another, and queries read Snapshots on any. The sealed-layer
// list of a table is an immutable slice swapped atomically, so owner reads take
// no lock. Layer memory is never reused, so slices returned by Table.Get and
// iterators over a layer stay intact after later writes.
package state
