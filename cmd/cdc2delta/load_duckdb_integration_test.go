//go:build integration

package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
)

// duckdbLoaded has DuckDB compare a loaded table with its snapshot CSV:
// rows of each not in the other, and the table's row count.
const duckdbLoaded = `
import sys
d = sys.modules["__main__"].DuckDB()
cols = "order_id, customer_id, status, amount, order_date"
d.con.execute(f"CREATE VIEW t AS SELECT {cols} FROM delta_scan('%s')")
d.con.execute(f"""CREATE VIEW f AS SELECT {cols} FROM read_csv('%s', header=true, columns={{
  'order_id': 'INTEGER', 'customer_id': 'VARCHAR', 'status': 'VARCHAR', 'amount': 'DECIMAL(10,2)',
  'order_date': 'DATE', 'updated_at': 'VARCHAR'}})""")
print(*d.con.execute("""SELECT (SELECT count(*) FROM (SELECT * FROM t EXCEPT ALL SELECT * FROM f)),
  (SELECT count(*) FROM (SELECT * FROM f EXCEPT ALL SELECT * FROM t)), (SELECT count(*) FROM t)""").fetchone())
`

// TestLoadDuckDB reads a loaded table with DuckDB and compares it with
// the file loaded.
func TestLoadDuckDB(t *testing.T) {
	dir, csvPath, steps := loadedTable(t)
	require.Equal(t, exitOK, steps[2].code, steps[2].stderr)
	out := fulltier.Read(t, fulltier.Request{Engine: fulltier.DuckDB, API: "recipe", Code: fmt.Sprintf(duckdbLoaded, dir, csvPath)})[0]
	require.Empty(t, out.Err)
	require.Equal(t, "0 0 500", strings.TrimSpace(out.Rows[0]["output"].(string)), "table rows not in the file, file rows not in the table, table rows")
}
