package engine

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/connector/datagen"
	"github.com/streamsql/streamsql/connector/nexmark"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/sqlerr"
)

// rowSource is a connector's generator as a source reader drives it. Its
// rows are a deterministic function of (split, row number), so a reader
// that records the next row number of each split at a checkpoint replays
// exactly after a restart. Implementations are immutable and safe for
// concurrent use.
type rowSource interface {
	// Splits is the number of splits (at least 1).
	Splits() int
	// SplitRows is the number of rows of split s, or -1 if unbounded.
	SplitRows(s int) int64
	// Batch returns rows [first, first+n) of split s, fewer at its end, with
	// the relation's columns and its row id last. The caller releases it.
	Batch(mem memory.Allocator, s int, first, n int64) arrow.RecordBatch
	// RowsPerSecond paces the whole source (0: unpaced).
	RowsPerSecond() float64
	// ChunkSize is the largest number of rows per batch.
	ChunkSize() int
}

// newRowSource returns the generator of a source.
func newRowSource(rel *catalog.Relation) (rowSource, error) {
	var cols []catalog.Column
	for _, c := range rel.Columns {
		if !c.Hidden {
			cols = append(cols, c)
		}
	}
	switch c := rel.Options["connector"]; c {
	case "datagen":
		dc := make([]datagen.Column, len(cols))
		for i, c := range cols {
			dc[i] = datagen.Column{Name: c.Name, Type: c.Type}
		}
		g, err := datagen.New(dc, rel.Options)
		if err != nil {
			return nil, err
		}
		return datagenSource{g}, nil
	case "nexmark":
		cfg, err := nexmark.ParseOptions(rel.Options)
		if err != nil {
			return nil, err
		}
		nc := make([]nexmark.Column, len(cols))
		for i, c := range cols {
			nc[i] = nexmark.Column{Name: c.Name, Type: c.Type}
		}
		if err := nexmark.CheckColumns(cfg.Table, nc); err != nil {
			return nil, err
		}
		return nexmark.New(cfg), nil
	case cdcConnector:
		return nil, sqlerr.Unsupported("reading postgres-cdc source %s in a view (create a table FROM %s TABLE '...' and read the table)", rel.Name, rel.Name)
	default:
		return nil, sqlerr.Unsupported("connector %q (streamsql has datagen, nexmark, kafka, posix_fs and postgres-cdc)", c)
	}
}

// defaultSourceColumns returns the columns of a source declared without a
// column list, for connectors that have a fixed schema (nexmark).
func defaultSourceColumns(opts map[string]string) ([]catalog.Column, error) {
	if opts["connector"] != "nexmark" {
		return nil, nil
	}
	cfg, err := nexmark.ParseOptions(opts)
	if err != nil {
		return nil, err
	}
	var cols []catalog.Column
	for _, c := range nexmark.Columns(cfg.Table) {
		cols = append(cols, catalog.Column{Name: c.Name, Type: c.Type})
	}
	return cols, nil
}

// datagenSource is a datagen generator as a row source: split s has rows
// s, s+K, ... of its K splits (datagen.split.num).
type datagenSource struct{ g *datagen.Generator }

func (d datagenSource) Splits() int { return d.g.Splits }

func (d datagenSource) SplitRows(s int) int64 { return d.g.SplitRows(s) }

func (d datagenSource) Batch(mem memory.Allocator, s int, first, n int64) arrow.RecordBatch {
	if d.g.Splits == 1 {
		return d.g.Batch(mem, first, n)
	}
	return d.g.SplitBatch(mem, s, first, n)
}

func (d datagenSource) RowsPerSecond() float64 { return d.g.Rate }

func (d datagenSource) ChunkSize() int { return exec.BatchSize }

// rowSourceSplits returns the number of splits of source rel if it is a
// row source (datagen, nexmark), whose readers can be split among several
// actors; 0 otherwise.
func rowSourceSplits(rel *catalog.Relation) int {
	switch rel.Options["connector"] {
	case "datagen", "nexmark":
	default:
		return 0
	}
	g, err := newRowSource(rel)
	if err != nil {
		return 0
	}
	return g.Splits()
}
