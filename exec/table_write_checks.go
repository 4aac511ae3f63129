package exec

import (
	"bytes"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec/eval"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// The constraint checks of TableWrite. Each takes records of every column
// of the table and reports the first violation in statement order, with
// PostgreSQL's SQLSTATE, message and detail.

// checkViolation is SQLSTATE 23514.
const checkViolation = "23514"

// CheckRows fails if a row of rec breaks NOT NULL (23502) or a CHECK
// constraint (23514).
func (w *TableWrite) CheckRows(rec arrow.RecordBatch) error {
	if err := w.CheckNotNull(rec); err != nil {
		return err
	}
	return w.CheckConstraints(rec)
}

// CheckNotNull fails with 23502 if a NOT NULL column of rec is NULL.
func (w *TableWrite) CheckNotNull(rec arrow.RecordBatch) error {
	for i, c := range w.rel.Columns {
		if c.NotNull && rec.Column(i).NullN() > 0 {
			return &sqlerr.Error{Code: sqlerr.NotNullViolation,
				Message: "null value in column \"" + c.Name + "\" of relation \"" + w.rel.Name + "\" violates not-null constraint"}
		}
	}
	return nil
}

// CheckConstraints fails with 23514 if a row of rec makes a CHECK
// constraint false (NULL passes, as in PostgreSQL).
func (w *TableWrite) CheckConstraints(rec arrow.RecordBatch) error {
	if len(w.checks) == 0 || rec.NumRows() == 0 {
		return nil
	}
	ctx := &eval.Context{Mem: w.mem, Strict: true}
	for j, ev := range w.checks {
		arr, err := ev.Eval(ctx, rec)
		if err != nil {
			return err
		}
		res := arr.(*array.Boolean)
		bad := -1
		for i := range res.Len() {
			if res.IsValid(i) && !res.Value(i) {
				bad = i
				break
			}
		}
		arr.Release()
		if bad >= 0 {
			return sqlerr.New(checkViolation, "new row for relation \"%s\" violates check constraint \"%s\"", w.rel.Name, w.rel.Checks[j].Name).
				WithDetail("Failing row contains (" + w.rowText(rec, bad) + ").")
		}
	}
	return nil
}

// rowText renders the visible columns of row i of rec as PostgreSQL's
// "Failing row contains" detail does.
func (w *TableWrite) rowText(rec arrow.RecordBatch, i int) string {
	var vals []string
	ts := w.rows.Types()
	for _, ci := range w.rel.VisibleColumns() {
		d := types.DatumAt(ts[ci], rec.Column(ci), i)
		if d.Null {
			vals = append(vals, "null")
			continue
		}
		vals = append(vals, d.Text(ts[ci]))
	}
	return strings.Join(vals, ", ")
}

// PrimaryKeyName is the name of rel's primary key constraint.
func PrimaryKeyName(rel *catalog.Relation) string {
	if rel.PrimaryKeyName != "" {
		return rel.PrimaryKeyName
	}
	return rel.Name + "_pkey"
}

// DuplicateKey is the 23505 error of row i of rec repeating a primary key.
func (w *TableWrite) DuplicateKey(rec arrow.RecordBatch, i int) error {
	var names, vals []string
	ts := w.rows.Types()
	for _, k := range w.rel.Key {
		names = append(names, w.rel.Columns[k].Name)
		vals = append(vals, types.DatumAt(ts[k], rec.Column(k), i).Text(ts[k]))
	}
	return &sqlerr.Error{
		Code:    sqlerr.UniqueViolation,
		Message: "duplicate key value violates unique constraint \"" + PrimaryKeyName(w.rel) + "\"",
		Detail:  "Key (" + strings.Join(names, ", ") + ")=(" + strings.Join(vals, ", ") + ") already exists.",
	}
}

// RowKey is the primary key of row Row of record Rec of a statement, at
// arena[Off:End] of the statement's key arena (EncodeKeys).
type RowKey struct{ Rec, Row, Off, End int }

// EncodeKeys encodes the key of every row of full into one arena, a record
// at a time; keys lists them in statement order.
func (w *TableWrite) EncodeKeys(full []arrow.RecordBatch) (arena []byte, keys []RowKey) {
	n := 0
	for _, rec := range full {
		n += int(rec.NumRows())
	}
	keys = make([]RowKey, 0, n)
	for r, rec := range full {
		w.rows.EncodeKeys(rec)
		for i := range int(rec.NumRows()) {
			off := len(arena)
			arena = append(arena, w.rows.RowKey(i)...)
			keys = append(keys, RowKey{Rec: r, Row: i, Off: off, End: len(arena)})
		}
	}
	return arena, keys
}

// checkNewKeys fails with 23505 for the first row of full (in statement
// order) whose primary key is already in the table or is the key of an
// earlier row of full. The keys are sorted, so repeats are neighbours;
// when the table holds no row between the least and the greatest of them
// (an append, as loads in key order are), one seek replaces a point read
// per row.
func (w *TableWrite) checkNewKeys(full []arrow.RecordBatch) error {
	arena, keys := w.EncodeKeys(full)
	if len(keys) == 0 {
		return nil
	}
	key := func(k RowKey) []byte { return arena[k.Off:k.End] }
	if !slices.IsSortedFunc(keys, func(a, b RowKey) int { return bytes.Compare(key(a), key(b)) }) {
		slices.SortStableFunc(keys, func(a, b RowKey) int { return bytes.Compare(key(a), key(b)) })
	}
	first := RowKey{Rec: -1}
	violates := func(k RowKey) {
		if first.Rec < 0 || k.Rec < first.Rec || k.Rec == first.Rec && k.Row < first.Row {
			first = k
		}
	}
	for j := 1; j < len(keys); j++ {
		if bytes.Equal(key(keys[j-1]), key(keys[j])) {
			violates(keys[j]) // the later of equal keys, in statement order
		}
	}
	empty, err := w.noRowsBetween(key(keys[0]), key(keys[len(keys)-1]))
	if err != nil {
		return err
	}
	for j := 0; !empty && j < len(keys); j++ {
		_, exists, err := w.rows.Table.Get(key(keys[j]))
		if err != nil {
			return err
		}
		if exists {
			violates(keys[j])
		}
	}
	if first.Rec >= 0 {
		return w.DuplicateKey(full[first.Rec], first.Row)
	}
	return nil
}

// noRowsBetween reports whether the table (its writes so far included) has
// no row whose key is in [lo, hi].
func (w *TableWrite) noRowsBetween(lo, hi []byte) (bool, error) {
	upper := append(slices.Clip(hi), 0) // the first key after hi
	it, err := w.rows.Table.NewIter(lo, upper)
	if err != nil {
		return false, err
	}
	found := it.First()
	err = it.Error()
	if cerr := it.Close(); err == nil {
		err = cerr
	}
	return !found, err
}

// checkMovedKeys fails with 23505 if the new versions news of rows olds
// repeat a primary key among themselves, or take the key of a stored row
// the statement does not change.
func (w *TableWrite) checkMovedKeys(olds, news []arrow.RecordBatch) error {
	oldKeys := map[string]bool{}
	for _, r := range olds {
		w.rows.EncodeKeys(r)
		for i := range int(r.NumRows()) {
			oldKeys[string(w.rows.RowKey(i))] = true
		}
	}
	newKeys := make(map[string]bool, len(oldKeys))
	for _, r := range news {
		w.rows.EncodeKeys(r)
		for i := range int(r.NumRows()) {
			k := w.rows.RowKey(i)
			if newKeys[string(k)] {
				return w.DuplicateKey(r, i)
			}
			newKeys[string(k)] = true
			if oldKeys[string(k)] {
				continue
			}
			if _, exists, err := w.rows.Table.Get(k); err != nil {
				return err
			} else if exists {
				return w.DuplicateKey(r, i)
			}
		}
	}
	return nil
}

// CheckUnique fails with 23505 if a row of news would repeat the columns of
// a unique index: of another row of news, or of a stored row that is not
// among olds (the rows the statement replaces or deletes).
func (w *TableWrite) CheckUnique(news, olds []arrow.RecordBatch) error {
	var replaced map[string]bool
	for _, x := range w.rows.Indexes {
		if !x.Def.Unique {
			continue
		}
		if replaced == nil {
			replaced = map[string]bool{}
			for _, r := range olds {
				w.rows.EncodeKeys(r)
				for i := range int(r.NumRows()) {
					replaced[string(w.rows.RowKey(i))] = true
				}
			}
		}
		seen := map[string]bool{}
		for _, r := range news {
			for i := range int(r.NumRows()) {
				var ok bool
				if w.keyBuf, ok = UniquePrefix(w.keyBuf[:0], w.rows.Types(), x.Def, r, i); !ok {
					continue
				}
				if seen[string(w.keyBuf)] {
					return w.UniqueError("duplicate key value violates unique constraint \"%s\"", x.Def, r, i, "already exists")
				}
				seen[string(w.keyBuf)] = true
				taken, err := entryOutside(x.Table, w.keyBuf, replaced)
				if err != nil {
					return err
				}
				if taken {
					return w.UniqueError("duplicate key value violates unique constraint \"%s\"", x.Def, r, i, "already exists")
				}
			}
		}
	}
	return nil
}

// UniquePrefix appends the encoding of the index columns of def for row i
// of rec (every column, of types ts) to buf: the prefix of the row's index
// entry. ok is false when one is NULL (NULLs are distinct: such a row never
// conflicts).
func UniquePrefix(buf []byte, ts []types.T, def catalog.Index, rec arrow.RecordBatch, i int) (_ []byte, ok bool) {
	for _, c := range def.Columns {
		if rec.Column(c).IsNull(i) {
			return buf, false
		}
		buf = state.AppendKey(buf, ts[c], rec.Column(c), i)
	}
	return buf, true
}

// UniqueError is the 23505 error of row i of rec repeating the columns of
// unique index def; msg has a %s for the index's name, and verb ends the
// detail ("already exists", "is duplicated").
func (w *TableWrite) UniqueError(msg string, def catalog.Index, rec arrow.RecordBatch, i int, verb string) error {
	var names, vals []string
	ts := w.rows.Types()
	for _, c := range def.Columns {
		names = append(names, w.rel.Columns[c].Name)
		vals = append(vals, types.DatumAt(ts[c], rec.Column(c), i).Text(ts[c]))
	}
	return sqlerr.New(sqlerr.UniqueViolation, msg, def.Name).
		WithDetail("Key (" + strings.Join(names, ", ") + ")=(" + strings.Join(vals, ", ") + ") " + verb + ".")
}

// entryOutside reports whether index table t holds an entry starting with
// prefix whose row (the key after the prefix) is not in replaced.
func entryOutside(t *state.Table, prefix []byte, replaced map[string]bool) (bool, error) {
	it, err := t.NewIter(prefix, state.PrefixEnd(prefix))
	if err != nil {
		return false, err
	}
	found := false
	for ok := it.First(); ok && !found; ok = it.Next() {
		found = !replaced[string(it.Key()[len(prefix):])]
	}
	err = it.Error()
	if cerr := it.Close(); err == nil {
		err = cerr
	}
	return found, err
}
