// Package registry is an in-process, Confluent-compatible Schema Registry.
//
// It serves the subset of the Confluent REST API that Debezium's Avro
// converter and franz-go's pkg/sr client use: registering a schema under a
// subject, looking schemas up by global id, by subject version or by content,
// and listing subjects and versions. Tests, the quickstart command and the
// benchmarks use it so that nothing needs a JVM.
//
// What it deliberately does not do: compatibility checks (GET /config reports
// NONE, which is what it enforces), deletes, schema references, contexts and
// modes. Schemas are compared by their compact JSON text, so the same schema
// registered twice, under any subject, gets the same id, as in Confluent's
// registry.
//
// With [Dir] the registry keeps its state in a JSON file and reloads it on
// [New], so a restarted quickstart finds the ids its Kafka records carry.
package registry
