package merge

import (
	"context"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strings"
	"time"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/deltalog/memstore"
)

// stats checks add's statistics against its physical rows: the writer
// computes them again from the rows (the rules of Delta's statistics are
// its), and numRecords, every nullCount and, unless tightBounds is false,
// every min and max the log records must equal them.
func (v *verifier) stats(ctx context.Context, add *deltalog.Add, rows [][]any) error {
	have, ok, err := deltalog.ParseStats(add.Stats)
	if err != nil {
		v.problem(Problem{Kind: ProblemStats, File: add.Path, Row: -1, Msg: err.Error()})
		return nil
	}
	if !ok {
		return nil // no statistics: nothing claimed
	}
	if have.NumRecords != int64(len(rows)) {
		v.problem(Problem{Kind: ProblemStats, File: add.Path, Row: -1,
			Msg: fmt.Sprintf("numRecords is %d, the file has %d rows", have.NumRecords, len(rows))})
	}
	if len(rows) == 0 {
		return nil
	}
	// The file is written only for its statistics: no compression.
	props := maps.Clone(v.st.meta.Configuration)
	if props == nil {
		props = map[string]string{}
	}
	props["delta.parquet.compression.codec"] = "uncompressed"
	w, err := datafile.NewWriter(datafile.Options{Schema: v.st.Schema, PartitionColumns: v.st.meta.PartitionColumns,
		Properties: props, TargetFileSize: 1 << 62, RowGroupSize: 1 << 62})
	if err != nil {
		return err
	}
	adds, err := w.Write(ctx, memstore.New(memstore.Options{}), rows)
	if err != nil {
		return fmt.Errorf("computing the statistics of %s: %w", add.Path, err)
	}
	if len(adds) != 1 {
		return fmt.Errorf("computing the statistics of %s: %d files written", add.Path, len(adds))
	}
	want, _, err := deltalog.ParseStats(adds[0].Stats)
	if err != nil {
		return err
	}
	type claim struct {
		what      string
		have, got map[string]any
	}
	claims := []claim{{"nullCount", have.NullCount, want.NullCount}}
	if have.TightBounds == nil || *have.TightBounds {
		claims = append(claims, claim{"minValues", have.MinValues, want.MinValues}, claim{"maxValues", have.MaxValues, want.MaxValues})
	}
	for _, c := range claims {
		hv, gv := flattenStats(c.have), flattenStats(c.got)
		for _, col := range slices.Sorted(maps.Keys(hv)) {
			g, ok := gv[col]
			if !ok {
				v.problem(Problem{Kind: ProblemStats, File: add.Path, Row: -1,
					Msg: fmt.Sprintf("%s.%s is %v, the rows give none", c.what, col, hv[col])})
			} else if !sameStat(hv[col], g) {
				v.problem(Problem{Kind: ProblemStats, File: add.Path, Row: -1,
					Msg: fmt.Sprintf("%s.%s is %v, the rows give %v", c.what, col, hv[col], g)})
			}
		}
	}
	return nil
}

// flattenStats flattens nested statistics to dotted physical paths.
func flattenStats(m map[string]any) map[string]any {
	out := map[string]any{}
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, v := range m {
			if sub, ok := v.(map[string]any); ok {
				walk(prefix+k+".", sub)
				continue
			}
			out[prefix+k] = v
		}
	}
	walk("", m)
	return out
}

// sameStat compares two statistics values as values: numbers by their
// exact value (1.50 = 1.5), timestamps by instant, else as text.
func sameStat(a, b any) bool {
	as, bs := fmt.Sprint(a), fmt.Sprint(b)
	if as == bs {
		return true
	}
	if x, ok := new(big.Rat).SetString(as); ok {
		if y, ok := new(big.Rat).SetString(bs); ok {
			return x.Cmp(y) == 0
		}
	}
	if strings.Contains(as, "T") {
		x, errA := time.Parse(time.RFC3339Nano, as)
		y, errB := time.Parse(time.RFC3339Nano, bs)
		return errA == nil && errB == nil && x.Equal(y)
	}
	return false
}
