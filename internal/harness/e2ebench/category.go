package e2ebench

import "strings"

// The CPU categories, by the package of the innermost frame that belongs to
// one of them.
const (
	CatDecode  = "decode"  // codecs and goavro
	CatMerge   = "merge"   // processor: routing, dedup, MERGE planning
	CatParquet = "parquet" // deltalog/datafile and parquet-go
	CatCommit  = "commit"  // deltalog: log, snapshots, commits, stores
	CatKafka   = "kafka"   // franz-go
	CatGC      = "gc"      // background GC work no category asked for
	CatOther   = "other"   // the scheduler, the harness, the rest
)

// Categories returns every category, in report order.
func Categories() []string {
	return []string{CatDecode, CatMerge, CatParquet, CatCommit, CatKafka, CatGC, CatOther}
}

// prefixes map package paths to categories, more specific first.
// Compression, bitmap and standard-library frames have none: their time
// belongs to the caller (snappy inflating a fetch is Kafka's, zstd inside
// a Parquet page is Parquet's).
func prefixes() []struct{ pkg, cat string } {
	return []struct{ pkg, cat string }{
		{"github.com/cdc2delta/cdc2delta/codecs", CatDecode},
		{"github.com/linkedin/goavro/v2", CatDecode},
		{"github.com/cdc2delta/cdc2delta/deltalog/datafile", CatParquet},
		{"github.com/parquet-go/parquet-go", CatParquet},
		{"github.com/cdc2delta/cdc2delta/deltalog", CatCommit},
		{"github.com/cdc2delta/cdc2delta/processor", CatMerge},
		{"github.com/twmb/franz-go", CatKafka},
	}
}

// Category returns the category of a profiled function name such as
// "github.com/parquet-go/parquet-go.(*Writer).Write", or "" when the
// function is neutral (its caller decides).
func Category(function string) string {
	for _, p := range prefixes() {
		rest, ok := strings.CutPrefix(function, p.pkg)
		if ok && (rest == "" || rest[0] == '.' || rest[0] == '/') {
			return p.cat
		}
	}
	return ""
}

// stackCategory classifies one sample by its stack, innermost function
// first: the first function with a category wins; a stack without one is
// GC work when it runs in a GC worker, else other.
func stackCategory(stack []string) string {
	gc := false
	for _, fn := range stack {
		if c := Category(fn); c != "" {
			return c
		}
		switch fn {
		case "runtime.gcBgMarkWorker", "runtime.bgsweep", "runtime.bgscavenge":
			gc = true
		}
	}
	if gc {
		return CatGC
	}
	return CatOther
}
