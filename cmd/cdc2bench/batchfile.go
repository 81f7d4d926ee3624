package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/parquet-go/parquet-go"
)

// batchRow is one event of a batch file: the table's columns, null for
// deletes except the key and the _cdc_ columns.
type batchRow struct {
	ID         int64    `parquet:"id"`
	CustomerID *int64   `parquet:"customer_id,optional"`
	Status     *string  `parquet:"status,optional"`
	Amount     *float64 `parquet:"amount,optional"`
	Quantity   *int32   `parquet:"quantity,optional"`
	Note       *string  `parquet:"note,optional"`
	UpdatedAt  *int64   `parquet:"updated_at,optional,timestamp(microsecond)"`
	Position   string   `parquet:"_cdc_position"`
	Op         string   `parquet:"_cdc_op"`
	CommitTime int64    `parquet:"_cdc_commit_time,timestamp(microsecond)"`
}

// errBatchFile means a batch file holds something cdc2bench did not write.
var errBatchFile = errors.New("cdc2bench: malformed batch file")

func (c change) batchRow() batchRow {
	b := batchRow{ID: c.ID, Position: positionOf(c.Seq).Hex(), Op: string(c.Op), CommitTime: commitMillis(c.Seq) * 1000}
	if c.Op != 'd' {
		r := c.Row
		b.CustomerID, b.Status, b.Amount, b.Quantity, b.Note, b.UpdatedAt = &r.CustomerID, &r.Status, &r.Amount, &r.Quantity, &r.Note, &r.UpdatedAt
	}
	return b
}

func (b batchRow) change() (change, error) {
	seq, err := seqOf(b.Position)
	if err != nil {
		return change{}, fmt.Errorf("%w: %w", errBatchFile, err)
	}
	c := change{ID: b.ID, Seq: seq}
	switch b.Op {
	case "c", "u", "r":
		if b.CustomerID == nil || b.Status == nil || b.Amount == nil || b.Quantity == nil || b.Note == nil || b.UpdatedAt == nil {
			return change{}, fmt.Errorf("%w: event at %s has null columns", errBatchFile, b.Position)
		}
		c.Row = row{CustomerID: *b.CustomerID, Status: *b.Status, Amount: *b.Amount, Quantity: *b.Quantity, Note: *b.Note, UpdatedAt: *b.UpdatedAt}
	case "d":
	default:
		return change{}, fmt.Errorf("%w: op %q", errBatchFile, b.Op)
	}
	c.Op = b.Op[0]
	if b.CommitTime != commitMillis(seq)*1000 {
		return change{}, fmt.Errorf("%w: commit time of %s does not match its position", errBatchFile, b.Position)
	}
	return c, nil
}

// batchFileName is the name of batch i (1-based) in a batches directory.
func batchFileName(i int) string { return fmt.Sprintf("%06d.parquet", i) }

// writeBatch writes one batch file.
func writeBatch(path string, cs []change) error {
	rows := make([]batchRow, len(cs))
	for i, c := range cs {
		rows[i] = c.batchRow()
	}
	if err := parquet.WriteFile(path, rows, parquet.Compression(&parquet.Snappy)); err != nil {
		return fmt.Errorf("writing batch %s: %w", path, err)
	}
	return nil
}

// readBatch reads one batch file back into changes.
func readBatch(path string) ([]change, error) {
	rows, err := parquet.ReadFile[batchRow](path)
	if err != nil {
		return nil, fmt.Errorf("reading batch %s: %w", path, err)
	}
	out := make([]change, len(rows))
	for i, r := range rows {
		if out[i], err = r.change(); err != nil {
			return nil, fmt.Errorf("reading batch %s: %w", path, err)
		}
	}
	return out, nil
}

// batchFiles lists the batch files of dir in order.
func batchFiles(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".parquet") {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	slices.Sort(out)
	if len(out) == 0 {
		return nil, fmt.Errorf("no batch files in %s", dir)
	}
	return out, nil
}
