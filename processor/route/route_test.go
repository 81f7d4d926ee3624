package route

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRouterRoute(t *testing.T) {
	tests := []struct {
		name, template, topic, want string
		wantErr                     bool
	}{
		{"default", "", "shop.sales.dbo.orders", "sales/dbo/orders", false},
		{"topic", "bronze/{topic}", "shop.sales.dbo.orders", "bronze/shop.sales.dbo.orders", false},
		{"dotted prefix", "{database}_{table}", "eu.shop.sales.dbo.orders", "sales_orders", false},
		{"mixed", "{topic}/{table}", "a.b.c", "a.b.c/c", false},
		{"too few parts", "{table}", "orders", "", true},
		{"empty part", "{table}", "a..c", "", true},
		{"empty topic", "{topic}", "", "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewRouter(tc.template)
			require.NoError(t, err)
			got, err := r.Route(tc.topic)
			if tc.wantErr {
				require.ErrorIs(t, err, ErrRoute)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestNewRouterRejects(t *testing.T) {
	for _, tmpl := range []string{"fixed/path", "{tabel}/x", "{topic}/{"} {
		_, err := NewRouter(tmpl)
		require.ErrorIs(t, err, ErrRoute, tmpl)
	}
}

func TestRouterSource(t *testing.T) {
	tests := []struct {
		name, template, topic string
		want                  TableSource
	}{
		{"default", "", "shop.sales.dbo.orders",
			TableSource{Topic: "shop.sales.dbo.orders", Database: "sales", Schema: "dbo", Table: "orders", Path: "sales/dbo/orders"}},
		{"topic template, short topic", "t/{topic}", "orders", TableSource{Topic: "orders", Path: "t/orders"}},
		{"topic template keeps the names", "{topic}", "a.b.c", TableSource{Topic: "a.b.c", Database: "a", Schema: "b", Table: "c", Path: "a.b.c"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewRouter(tc.template)
			require.NoError(t, err)
			got, err := r.Source(tc.topic)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}
