package tableops

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
)

// side is which side of a reconcile a row comes from.
type side int

const (
	sideTable side = iota
	sideFile
)

// spill holds both sides' rows in one file per side and hash partition.
type spill struct {
	dir   string
	parts int
	files [2][]*os.File
	w     [2][]*bufio.Writer
	buf   []byte
}

func newSpill(tempDir string, parts int) (*spill, error) {
	dir, err := os.MkdirTemp(tempDir, "cdc2delta-reconcile-")
	if err != nil {
		return nil, fmt.Errorf("spill directory: %w", err)
	}
	s := &spill{dir: dir, parts: parts}
	for sd := range 2 {
		for p := range parts {
			f, err := os.CreateTemp(dir, fmt.Sprintf("side%d-part%d-", sd, p))
			if err != nil {
				s.close()
				return nil, fmt.Errorf("spill file: %w", err)
			}
			s.files[sd] = append(s.files[sd], f)
			s.w[sd] = append(s.w[sd], bufio.NewWriterSize(f, 16<<10))
		}
	}
	return s, nil
}

// write appends a row to its key's partition of side sd.
func (s *spill) write(sd side, key string, cells []cell) error {
	b := binary.AppendUvarint(s.buf[:0], uint64(len(cells)))
	for _, c := range cells {
		if c.null {
			b = append(b, 1)
			continue
		}
		b = append(b, 0)
		b = binary.AppendUvarint(b, uint64(len(c.text)))
		b = append(b, c.text...)
	}
	s.buf = b
	if _, err := s.w[sd][partitionOf(key, s.parts)].Write(b); err != nil {
		return fmt.Errorf("spilling rows: %w", err)
	}
	return nil
}

// reader returns partition p of side sd from its start.
func (s *spill) reader(sd side, p int) (*bufio.Reader, error) {
	if err := s.w[sd][p].Flush(); err != nil {
		return nil, fmt.Errorf("spilling rows: %w", err)
	}
	f := s.files[sd][p]
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("reading spilled rows: %w", err)
	}
	return bufio.NewReader(f), nil
}

// readCells reads one spilled row; ok is false at the end.
func readCells(r *bufio.Reader) (cells []cell, ok bool, err error) {
	n, err := binary.ReadUvarint(r)
	if errors.Is(err, io.EOF) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("reading spilled rows: %w", err)
	}
	cells = make([]cell, n)
	for i := range cells {
		null, err := r.ReadByte()
		if err != nil {
			return nil, false, fmt.Errorf("reading spilled rows: %w", err)
		}
		if null == 1 {
			cells[i].null = true
			continue
		}
		l, err := binary.ReadUvarint(r)
		if err != nil {
			return nil, false, fmt.Errorf("reading spilled rows: %w", err)
		}
		b := make([]byte, l)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, false, fmt.Errorf("reading spilled rows: %w", err)
		}
		cells[i].text = string(b)
	}
	return cells, true, nil
}

func (s *spill) close() {
	for sd := range 2 {
		for _, f := range s.files[sd] {
			f.Close()
		}
	}
	os.RemoveAll(s.dir)
}

// compareRows compares partition p: the table's rows by key in memory,
// the file's streamed against them.
func compareRows(ctx context.Context, sp *spill, p int, cols reconciled, res *ReconcileResult, samples int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	tr, err := sp.reader(sideTable, p)
	if err != nil {
		return err
	}
	table := map[string][]cell{}
	for {
		cells, ok, err := readCells(tr)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		k := keyText(cells[:cols.nkey])
		if _, dup := table[k]; dup {
			res.DuplicateTable++
			continue
		}
		table[k] = cells
	}
	res.HeldRows = max(res.HeldRows, int64(len(table)))
	fr, err := sp.reader(sideFile, p)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for {
		cells, ok, err := readCells(fr)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		k := keyText(cells[:cols.nkey])
		if seen[k] {
			res.DuplicateFile++
			continue
		}
		seen[k] = true
		have, ok := table[k]
		if !ok {
			res.Missing++
			if len(res.MissingSamples) < samples {
				res.MissingSamples = append(res.MissingSamples, cols.showKey(cells))
			}
			continue
		}
		if diff := cols.diff(have, cells); diff != "" {
			res.Different++
			if len(res.DifferentSamples) < samples {
				res.DifferentSamples = append(res.DifferentSamples, cols.showKey(cells)+": "+diff)
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(table)) {
		cells := table[k]
		if seen[k] {
			continue
		}
		res.Extra++
		if len(res.ExtraSamples) < samples {
			res.ExtraSamples = append(res.ExtraSamples, cols.showKey(cells))
		}
	}
	return nil
}

// diff names the columns whose values differ, "" when none do.
func (r reconciled) diff(table, file []cell) string {
	var parts []string
	for i := r.nkey; i < len(r.fields); i++ {
		if table[i] != file[i] {
			parts = append(parts, fmt.Sprintf("%s table=%s file=%s", r.fields[i].Name, table[i], file[i]))
		}
	}
	return strings.Join(parts, "; ")
}
