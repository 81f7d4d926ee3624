package tableops

import (
	"encoding/csv"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/parquet-go/parquet-go"
)

// ErrFileFormat: a file of rows is neither CSV nor Parquet, or is
// malformed.
var ErrFileFormat = errors.New("unreadable CSV or Parquet file")

// expected is a file of rows, opened with its column names read.
type expected struct {
	path string
	f    *os.File
	info os.FileInfo
	cols []string
	csv  *csv.Reader   // nil for Parquet
	pq   *parquet.File // nil for CSV
}

// openExpected opens a CSV file (with a header) or a Parquet file and
// reads its column names.
func openExpected(path string) (*expected, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	e := &expected{path: path, f: f, info: info}
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".csv":
		e.csv = csv.NewReader(f)
		e.csv.ReuseRecord = true
		header, err := e.csv.Read()
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("%w: %s: reading the header: %v", ErrFileFormat, path, err)
		}
		e.cols = append([]string(nil), header...)
	case ".parquet":
		pf, err := parquet.OpenFile(f, info.Size())
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("%w: %s: %v", ErrFileFormat, path, err)
		}
		e.pq = pf
		for _, c := range pf.Schema().Fields() {
			e.cols = append(e.cols, c.Name())
		}
	default:
		f.Close()
		return nil, fmt.Errorf("%w: %s: want a .csv or .parquet file, not %q", ErrFileFormat, path, ext)
	}
	return e, nil
}

func (e *expected) close() { e.f.Close() }
