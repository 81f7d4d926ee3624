package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/processor/route"
)

func TestHistoryPath(t *testing.T) {
	src := route.TableSource{Topic: "shop.sales.dbo.orders", Database: "sales", Schema: "dbo", Table: "orders", Path: "s3://lake/sales/dbo/orders/"}
	require.Equal(t, "s3://lake/sales/dbo/orders_history", historyPath("{path}_history", src))
	require.Equal(t, "s3://hist/sales/dbo/orders-shop.sales.dbo.orders", historyPath("s3://hist/{database}/{schema}/{table}-{topic}", src))
}
