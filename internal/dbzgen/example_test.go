package dbzgen_test

import (
	"context"
	"fmt"
	"net/http/httptest"

	"github.com/twmb/franz-go/pkg/sr"

	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
	"github.com/cdc2delta/cdc2delta/internal/registry"
)

// Generate a few events of the sample database and print their Kafka
// coordinates; a real feed would produce them with kgo.
func Example() {
	reg, err := registry.New()
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(reg.Handler())
	defer srv.Close()
	cl, err := sr.NewClient(sr.URLs(srv.URL))
	if err != nil {
		panic(err)
	}

	gen := dbzgen.New(cl, dbzgen.DefaultOptions())
	customers, _ := gen.Table(dbzgen.Customers())
	orders, _ := gen.Table(dbzgen.Orders())
	w, _ := dbzgen.NewWorkload(dbzgen.WorkloadOptions{Seed: 1, Keys: 2, Snapshot: true}, customers, orders)
	for range 6 {
		ev := w.Next()
		key, value, err := gen.Encode(context.Background(), ev)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s op=%c snapshot=%s key=% x value[:5]=% x\n", ev.Table.Topic(), ev.Op, ev.Source.Snapshot, key[:5], value[:5])
	}
	// Output:
	// shop.sales.dbo.customers op=r snapshot=first key=00 00 00 00 01 value[:5]=00 00 00 00 02
	// shop.sales.dbo.customers op=r snapshot=last_in_data_collection key=00 00 00 00 01 value[:5]=00 00 00 00 02
	// shop.sales.dbo.orders op=r snapshot=first_in_data_collection key=00 00 00 00 03 value[:5]=00 00 00 00 04
	// shop.sales.dbo.orders op=r snapshot=last key=00 00 00 00 03 value[:5]=00 00 00 00 04
	// shop.sales.dbo.orders op=u snapshot= key=00 00 00 00 03 value[:5]=00 00 00 00 04
	// shop.sales.dbo.customers op=u snapshot= key=00 00 00 00 01 value[:5]=00 00 00 00 02
}
