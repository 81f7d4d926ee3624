package deltalog

import "github.com/parquet-go/parquet-go"

// CheckpointTexts gives the texts the checkpoint reader rebuilds from one typed
// value of a partitionValues_parsed or stats_parsed column named "c" of type t:
// the partition value, and the stats JSON ({"c":…}).
func CheckpointTexts(t parquet.Type, v parquet.Value) (partition *string, stats string, partErr, statsErr error) {
	leaf := &parsedNode{name: "c", col: 0, present: groupRef{col: 0}}
	leaf.kind, leaf.scale, leaf.unit = parsedKindOf(t)
	root := &parsedNode{present: groupRef{col: 0}, col: -1, children: []*parsedNode{leaf}}
	rc := rowCols{{v}}
	stats, statsErr = root.statsJSON(rc)
	pv, partErr := root.partitionValues(rc)
	return pv["c"], stats, partErr, statsErr
}
