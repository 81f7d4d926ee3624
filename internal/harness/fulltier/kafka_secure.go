package fulltier

import "testing"

// Environment variables naming the full tier broker's authenticated listeners
// (scripts/setup/kafka.sh writes them to secure.env; scripts/test.sh exports them).
const (
	EnvKafkaSASLBrokers    = "CDC2DELTA_KAFKA_SASL_BROKERS"
	EnvKafkaSASLSSLBrokers = "CDC2DELTA_KAFKA_SASL_SSL_BROKERS"
	EnvKafkaSASLUser       = "CDC2DELTA_KAFKA_SASL_USER"
	EnvKafkaSASLPassword   = "CDC2DELTA_KAFKA_SASL_PASSWORD"
	EnvKafkaCAFile         = "CDC2DELTA_KAFKA_CA_FILE"
)

// SecureKafka is the full tier broker's SASL_PLAINTEXT listener (PLAIN,
// SCRAM-SHA-256, SCRAM-SHA-512) and SASL_SSL listener (the same mechanisms over
// TLS with a self-signed certificate for 127.0.0.1, whose PEM is CAFile).
type SecureKafka struct {
	SASL, SASLSSL  string
	User, Password string
	CAFile         string
}

// KafkaSecure returns the authenticated listeners of the full tier's broker.
func KafkaSecure(t testing.TB) SecureKafka {
	t.Helper()
	return SecureKafka{
		SASL: env(t, EnvKafkaSASLBrokers), SASLSSL: env(t, EnvKafkaSASLSSLBrokers),
		User: env(t, EnvKafkaSASLUser), Password: env(t, EnvKafkaSASLPassword),
		CAFile: env(t, EnvKafkaCAFile),
	}
}
