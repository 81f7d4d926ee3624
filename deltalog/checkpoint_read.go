package deltalog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/parquet-go/parquet-go"
)

// errParquetPanic marks a checkpoint on which the Parquet decoder panicked; parquet-go can
// panic on malformed input, so decoding recovers at the file boundary.
var errParquetPanic = errors.New("deltalog: parquet decoder failed")

// sidecarDir holds the sidecar files of v2 checkpoints, relative to the table root.
const sidecarDir = "_delta_log/_sidecars/"

// checkpointReadBatch is how many rows are decoded per ReadRows call.
const checkpointReadBatch = 512

// readCheckpoint returns the actions of one checkpoint, given all its files: the parts of
// a multi-part checkpoint in order, a single classic file, or the top-level file of a v2
// checkpoint (.json or .parquet). Sidecars are read and their actions inlined after the
// top-level ones; checkpointMetadata and sidecar actions are dropped. A missing, truncated
// or corrupt file gives a *CorruptFileError naming it.
func readCheckpoint(ctx context.Context, s Store, paths []string) ([]Action, error) {
	var actions []Action
	var sidecars []*Sidecar
	for _, p := range paths {
		acts, err := readCheckpointFile(ctx, s, p)
		if err != nil {
			return nil, err
		}
		if actions == nil {
			actions = make([]Action, 0, len(acts))
		}
		for _, a := range acts {
			switch {
			case a.Sidecar != nil:
				sidecars = append(sidecars, a.Sidecar)
			case a.CheckpointMetadata != nil:
			default:
				actions = append(actions, a)
			}
		}
	}
	for _, sc := range sidecars {
		p, err := sidecarPath(sc.Path)
		if err != nil {
			return nil, &CorruptFileError{Path: paths[0], Err: err}
		}
		acts, err := readCheckpointFile(ctx, s, p)
		if err != nil {
			return nil, err
		}
		for _, a := range acts {
			// Sidecars hold only file actions; anything else there is not state.
			if a.Add != nil || a.Remove != nil {
				actions = append(actions, a)
			}
		}
	}
	return actions, nil
}

// sidecarPath resolves a sidecar action's path. Sidecars always live in
// _delta_log/_sidecars/, and writers are told to store only the file name; a longer
// (even absolute) URI is reduced to its last segment for that reason.
func sidecarPath(p string) (string, error) {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		p = p[i+1:]
	}
	name, err := url.PathUnescape(p)
	if err != nil || name == "" || name == "." || name == ".." {
		return "", fmt.Errorf("bad sidecar path %q", p)
	}
	return sidecarDir + name, nil
}

func readCheckpointFile(ctx context.Context, s Store, path string) ([]Action, error) {
	data, err := readCheckpointObject(ctx, s, path)
	if err != nil {
		return nil, err
	}
	if strings.HasSuffix(path, ".json") {
		return decodeJSONCheckpoint(path, data)
	}
	return decodeParquetCheckpoint(ctx, path, data)
}

// readCheckpointObject reads a whole object; a missing one is a *CorruptFileError wrapping the
// store's ErrNotExist, since a listed checkpoint must be readable.
func readCheckpointObject(ctx context.Context, s Store, path string) ([]byte, error) {
	rc, err := s.Get(ctx, path)
	if err != nil {
		return nil, &CorruptFileError{Path: path, Err: err}
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		return nil, &CorruptFileError{Path: path, Err: err}
	}
	return data, nil
}

// decodeJSONCheckpoint parses the newline-delimited actions of a v2 JSON checkpoint.
func decodeJSONCheckpoint(path string, data []byte) ([]Action, error) {
	var actions []Action
	lineNo := 0
	for len(data) > 0 {
		lineNo++
		line, rest, _ := bytes.Cut(data, []byte{'\n'})
		data = rest
		a, ok, err := ParseLogLine(line)
		if err != nil {
			return nil, &CorruptFileError{Path: path, Err: fmt.Errorf("line %d: %w", lineNo, err)}
		}
		if ok {
			actions = append(actions, a)
		}
	}
	if len(actions) == 0 {
		return nil, &CorruptFileError{Path: path, Err: errors.New("deltalog: checkpoint holds no actions")}
	}
	return actions, nil
}

// decodeParquetCheckpoint decodes a Parquet checkpoint, part or sidecar file.
func decodeParquetCheckpoint(ctx context.Context, path string, data []byte) (actions []Action, err error) {
	defer func() {
		if r := recover(); r != nil {
			actions, err = nil, &CorruptFileError{Path: path, Err: fmt.Errorf("%w: %v", errParquetPanic, r)}
		}
	}()
	actions, err = decodeParquetRows(ctx, data)
	if err != nil && ctx.Err() == nil {
		return nil, &CorruptFileError{Path: path, Err: err}
	}
	return actions, err
}

func decodeParquetRows(ctx context.Context, data []byte) ([]Action, error) {
	f, dec, err := openParquetCheckpoint(data)
	if err != nil {
		return nil, err
	}
	if proj := withoutParsedColumns(f.Root()); proj != nil {
		// Spark writes stats_parsed next to the stats JSON by default; for wide tables it
		// is most of the file. Read without it, and again with it only if some add turns
		// out to need it (writeStatsAsJson=false).
		pdec, err := newCheckpointDecoder(layoutOf(proj))
		if err != nil {
			return nil, err
		}
		pdec.schema = proj
		actions, err := pdec.decodeFile(ctx, f)
		if err != nil || !pdec.wantParsed {
			return actions, err
		}
	}
	return dec.decodeFile(ctx, f)
}

// openParquetCheckpoint reads a checkpoint file's footer and compiles its decoder.
func openParquetCheckpoint(data []byte) (*parquet.File, *checkpointDecoder, error) {
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)),
		parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return nil, nil, err
	}
	dec, err := newCheckpointDecoder(layoutOf(f.Root()))
	if err != nil {
		return nil, nil, err
	}
	return f, dec, nil
}

// withoutParsedColumns returns the file schema without add.stats_parsed and
// add.partitionValues_parsed, or nil when it has neither.
func withoutParsedColumns(root *parquet.Column) *parquet.Schema {
	add := root.Column(colAdd)
	if add == nil || add.Leaf() || (add.Column("stats_parsed") == nil && add.Column("partitionValues_parsed") == nil) {
		return nil
	}
	addGroup := parquet.Group{}
	for _, c := range add.Columns() {
		if n := c.Name(); n != "stats_parsed" && n != "partitionValues_parsed" {
			addGroup[n] = c
		}
	}
	top := parquet.Group{}
	for _, c := range root.Columns() {
		top[c.Name()] = c
	}
	switch {
	case add.Optional():
		top[colAdd] = parquet.Optional(addGroup)
	case add.Repeated():
		return nil
	default:
		top[colAdd] = addGroup
	}
	return parquet.NewSchema(root.Name(), top)
}

// decodeFile decodes every row of f. It must run under the recover of
// decodeParquetCheckpoint.
func (dec *checkpointDecoder) decodeFile(ctx context.Context, f *parquet.File) ([]Action, error) {
	// NumRows comes from the footer; do not trust it further than the file size.
	actions := make([]Action, 0, max(0, min(f.NumRows(), f.Size()/8)))
	buf := make([]parquet.Row, checkpointReadBatch)
	var rc rowCols
	rowNo := 0
	for _, rg := range f.RowGroups() {
		var err error
		actions, err = dec.decodeRowGroup(ctx, rg, buf, &rc, &rowNo, actions)
		if err != nil {
			return nil, err
		}
	}
	if int64(rowNo) != f.NumRows() {
		return nil, fmt.Errorf("read %d rows, footer says %d", rowNo, f.NumRows())
	}
	return actions, nil
}

// decodeRowGroup appends the actions of one row group; rowNo counts rows across groups
// for error messages.
func (dec *checkpointDecoder) decodeRowGroup(ctx context.Context, rg parquet.RowGroup, buf []parquet.Row, rc *rowCols, rowNo *int, actions []Action) ([]Action, error) {
	if dec.schema != nil {
		conv, err := parquet.Convert(dec.schema, rg.Schema())
		if err != nil {
			return nil, fmt.Errorf("projecting checkpoint columns: %w", err)
		}
		rg = parquet.ConvertRowGroup(rg, conv)
	}
	rows := rg.Rows()
	defer rows.Close()
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n, rerr := rows.ReadRows(buf)
		for _, row := range buf[:n] {
			*rowNo++
			rc.split(row, dec.numCols)
			a, ok, err := dec.decode(*rc)
			if err != nil {
				return nil, fmt.Errorf("row %d: %w", *rowNo, err)
			}
			if ok {
				actions = append(actions, a)
			}
		}
		switch {
		case rerr == io.EOF:
			return actions, nil
		case rerr != nil:
			return nil, fmt.Errorf("reading rows: %w", rerr)
		case n == 0:
			return nil, errors.New("reading rows: no progress")
		}
	}
}
