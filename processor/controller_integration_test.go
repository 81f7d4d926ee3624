//go:build integration

package processor

import (
	"fmt"
	"testing"
	"time"

	"github.com/cdc2delta/cdc2delta/internal/fulltier"
)

// TestControlTableRealBroker is TestControlTable against the real Kafka
// broker: transactions across two tables and three partitions, the
// transaction topic with late ENDs, the processor and the controller
// stopped abruptly and restarted, and the change log.
func TestControlTableRealBroker(t *testing.T) {
	brokers := fulltier.KafkaBrokers(t)
	for _, rule := range []string{"transactions", "watermark"} {
		t.Run(rule, func(t *testing.T) {
			testControlTable(t, rule == "transactions", 5, brokers, fmt.Sprintf("ctl%d", time.Now().UnixNano()))
		})
	}
}
