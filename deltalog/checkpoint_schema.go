package deltalog

import (
	"github.com/parquet-go/parquet-go"
)

// colNode is one node of a checkpoint file's Parquet schema with the levels and leaf
// column range needed to pull its values out of a parquet.Row. Readers resolve columns by
// name through it, so column order and absent optional columns never matter.
type colNode struct {
	node parquet.Node
	name string
	// def is the definition level a value reaches when this node is non-null; rep is the
	// repetition depth of the node (repeated ancestors, itself included).
	def, rep int
	// first and end delimit the leaf columns below this node, [first, end).
	first, end int
	children   []*colNode
	names      map[string]int
}

// layoutOf indexes a Parquet schema. Leaf columns are numbered depth first in field order,
// which is how parquet-go numbers the values of a parquet.Row.
func layoutOf(root parquet.Node) *colNode {
	next := 0
	return buildColNode(root, "", 0, 0, &next, true)
}

func buildColNode(n parquet.Node, name string, def, rep int, next *int, isRoot bool) *colNode {
	if !isRoot {
		switch {
		case n.Optional():
			def++
		case n.Repeated():
			def++
			rep++
		}
	}
	c := &colNode{node: n, name: name, def: def, rep: rep, first: *next}
	if n.Leaf() {
		*next++
		c.end = *next
		return c
	}
	fields := n.Fields()
	c.children = make([]*colNode, len(fields))
	c.names = make(map[string]int, len(fields))
	for i, f := range fields {
		c.children[i] = buildColNode(f, f.Name(), def, rep, next, false)
		c.names[f.Name()] = i
	}
	c.end = *next
	return c
}

// child returns the named field of a group, or nil when c is nil, a leaf, or lacks it.
func (c *colNode) child(name string) *colNode {
	if c == nil {
		return nil
	}
	i, ok := c.names[name]
	if !ok {
		return nil
	}
	return c.children[i]
}

// at follows a path of field names from c.
func (c *colNode) at(path ...string) *colNode {
	for _, p := range path {
		c = c.child(p)
	}
	return c
}

// leaf reports whether c is a leaf column.
func (c *colNode) leaf() bool { return c != nil && c.node.Leaf() }

// repeatedChild returns the single repeated child of a LIST or MAP group (the "list" or
// "key_value" group, or the repeated leaf of a legacy two-level list), whatever its name.
func (c *colNode) repeatedChild() *colNode {
	if c == nil || len(c.children) != 1 || !c.children[0].node.Repeated() {
		return nil
	}
	return c.children[0]
}

// Column names of the classic checkpoint schema.
const (
	colTxn                = "txn"
	colAdd                = "add"
	colRemove             = "remove"
	colMetadata           = "metaData"
	colProtocol           = "protocol"
	colDomainMetadata     = "domainMetadata"
	colCheckpointMetadata = "checkpointMetadata"
	colSidecar            = "sidecar"
)

// checkpointSchemaOptions selects the optional columns of a written checkpoint.
type checkpointSchemaOptions struct {
	// domainMetadata adds the domainMetadata column; written only when the table has domains.
	domainMetadata bool
	// clusteringProvider adds add.clusteringProvider; written only when some add carries one.
	clusteringProvider bool
}

// checkpointWriteSchema is the schema of the classic checkpoints we write. It follows the
// one Spark writes (every column optional, 3-level LIST, MAP with required keys), which
// Spark, delta-rs, kernel-rs and DuckDB all read. parquet-go orders group fields by name;
// readers resolve checkpoint columns by name, so that order is harmless.
func checkpointWriteSchema(o checkpointSchemaOptions) *parquet.Schema {
	str := func() parquet.Node { return parquet.Optional(parquet.String()) }
	i64 := func() parquet.Node { return parquet.Optional(parquet.Int(64)) }
	i32 := func() parquet.Node { return parquet.Optional(parquet.Int(32)) }
	boolean := func() parquet.Node { return parquet.Optional(parquet.Leaf(parquet.BooleanType)) }
	strMap := func() parquet.Node {
		return parquet.Optional(parquet.Map(parquet.String(), parquet.Optional(parquet.String())))
	}
	strList := func() parquet.Node { return parquet.Optional(parquet.List(parquet.Optional(parquet.String()))) }
	dv := func() parquet.Node {
		return parquet.Optional(parquet.Group{
			"storageType":    str(),
			"pathOrInlineDv": str(),
			"offset":         i32(),
			"sizeInBytes":    i32(),
			"cardinality":    i64(),
			"maxRowIndex":    i64(),
		})
	}
	add := parquet.Group{
		"path":                    str(),
		"partitionValues":         strMap(),
		"size":                    i64(),
		"modificationTime":        i64(),
		"dataChange":              boolean(),
		"stats":                   str(),
		"tags":                    strMap(),
		"deletionVector":          dv(),
		"baseRowId":               i64(),
		"defaultRowCommitVersion": i64(),
	}
	if o.clusteringProvider {
		add["clusteringProvider"] = str()
	}
	root := parquet.Group{
		colTxn: parquet.Optional(parquet.Group{
			"appId":       str(),
			"version":     i64(),
			"lastUpdated": i64(),
		}),
		colAdd: parquet.Optional(add),
		colRemove: parquet.Optional(parquet.Group{
			"path":                    str(),
			"deletionTimestamp":       i64(),
			"dataChange":              boolean(),
			"extendedFileMetadata":    boolean(),
			"partitionValues":         strMap(),
			"size":                    i64(),
			"deletionVector":          dv(),
			"baseRowId":               i64(),
			"defaultRowCommitVersion": i64(),
		}),
		colMetadata: parquet.Optional(parquet.Group{
			"id":          str(),
			"name":        str(),
			"description": str(),
			"format": parquet.Optional(parquet.Group{
				"provider": str(),
				"options":  strMap(),
			}),
			"schemaString":     str(),
			"partitionColumns": strList(),
			"configuration":    strMap(),
			"createdTime":      i64(),
		}),
		colProtocol: parquet.Optional(parquet.Group{
			"minReaderVersion": i32(),
			"minWriterVersion": i32(),
			"readerFeatures":   strList(),
			"writerFeatures":   strList(),
		}),
	}
	if o.domainMetadata {
		root[colDomainMetadata] = parquet.Optional(parquet.Group{
			"domain":        str(),
			"configuration": str(),
			"removed":       boolean(),
		})
	}
	// Spark names the root "spark_schema"; nothing reads the name, but matching it costs nothing.
	return parquet.NewSchema("spark_schema", root)
}
