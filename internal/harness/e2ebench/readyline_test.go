package e2ebench

import "testing"

// TestReadyLine reads /readyz's answer in the singular as in the plural: a
// run of one table on one partition says "1 partition, 1 table".
func TestReadyLine(t *testing.T) {
	for _, tc := range []struct {
		body, partitions, tables string
	}{
		{"ready: 1 partition, 1 table\n", "1", "1"},
		{"ready: 6 partitions, 3 tables\n", "6", "3"},
		{"ready: 6 partitions, 1 table\n", "6", "1"},
	} {
		m := readyLine.FindStringSubmatch(tc.body)
		if m == nil || m[1] != tc.partitions || m[2] != tc.tables {
			t.Errorf("%q: got %q, want %s partitions, %s tables", tc.body, m, tc.partitions, tc.tables)
		}
	}
	if m := readyLine.FindStringSubmatch("ready: 6 partitionsX, 3 tables"); m != nil {
		t.Errorf("matched a malformed line: %q", m)
	}
}
