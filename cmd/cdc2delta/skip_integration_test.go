//go:build integration

package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
)

// TestSkipCommandBeforeTableBroker is TestSkipCommandBeforeTable on the real
// broker: the replay `skip` prints for a table without a Delta log, followed
// exactly, drops no record but the skipped one.
func TestSkipCommandBeforeTableBroker(t *testing.T) {
	brokers := fulltier.KafkaBrokers(t)
	id := fmt.Sprintf("skipnotable%d", time.Now().UnixNano())
	testSkipBeforeTable(t, fixtureOptions{
		partitions: 1, brokers: brokers, prefix: id,
		kafka: fmt.Sprintf(`{brokers: [%q], group_id: %q, topics: ["%%s"]}`, brokers[0], id),
	})
}
