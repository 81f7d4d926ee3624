package deltalog_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

func TestMetadataEqual(t *testing.T) {
	created, later := int64(1_700_000_000_000), int64(1_700_000_000_001)
	base := func() deltalog.Metadata {
		return deltalog.Metadata{
			ID: "id-1", Name: "orders", Description: "orders table",
			Format:       deltalog.Format{Provider: "parquet", Options: map[string]string{}},
			SchemaString: `{"type":"struct","fields":[]}`, PartitionColumns: []string{"region"},
			CreatedTime: &created, Configuration: map[string]string{"delta.appendOnly": "false"},
		}
	}
	tests := []struct {
		name   string
		change func(*deltalog.Metadata)
		want   bool
	}{
		{"identical", func(*deltalog.Metadata) {}, true},
		{"nil format options equal empty ones", func(m *deltalog.Metadata) { m.Format.Options = nil }, true},
		{"same created time behind another pointer", func(m *deltalog.Metadata) { c := created; m.CreatedTime = &c }, true},
		{"id", func(m *deltalog.Metadata) { m.ID = "id-2" }, false},
		{"name", func(m *deltalog.Metadata) { m.Name = "orders2" }, false},
		{"description", func(m *deltalog.Metadata) { m.Description = "" }, false},
		{"format provider", func(m *deltalog.Metadata) { m.Format.Provider = "orc" }, false},
		{"format options", func(m *deltalog.Metadata) { m.Format.Options = map[string]string{"k": "v"} }, false},
		{"schema", func(m *deltalog.Metadata) { m.SchemaString = `{"type":"struct","fields":[{}]}` }, false},
		{"partition columns", func(m *deltalog.Metadata) { m.PartitionColumns = []string{"day"} }, false},
		{"created time", func(m *deltalog.Metadata) { m.CreatedTime = &later }, false},
		{"created time unset", func(m *deltalog.Metadata) { m.CreatedTime = nil }, false},
		{"configuration value", func(m *deltalog.Metadata) { m.Configuration = map[string]string{"delta.appendOnly": "true"} }, false},
		{"configuration key added", func(m *deltalog.Metadata) { m.Configuration["cdc2delta.keyColumns"] = `["id"]` }, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, b := base(), base()
			tc.change(&b)
			require.Equal(t, tc.want, a.Equal(b))
			require.Equal(t, tc.want, b.Equal(a), "Equal is symmetric")
		})
	}
	var zero deltalog.Metadata
	require.True(t, zero.Equal(deltalog.Metadata{Configuration: map[string]string{}, PartitionColumns: []string{}}),
		"nil and empty maps and slices are alike")
}

func TestDeletedFileRetention(t *testing.T) {
	tests := []struct {
		name string
		conf map[string]string
		want time.Duration
	}{
		{"unset: 7 days", nil, 7 * 24 * time.Hour},
		{"interval", map[string]string{deltalog.PropDeletedFileRetention: "interval 2 days"}, 48 * time.Hour},
		{"hours", map[string]string{deltalog.PropDeletedFileRetention: "interval 1 hours"}, time.Hour},
		{"malformed: the default", map[string]string{deltalog.PropDeletedFileRetention: "interval 1 month"}, 7 * 24 * time.Hour},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, deltalog.Metadata{Configuration: tc.conf}.DeletedFileRetention())
		})
	}
}
