// Package fulltier finds the external servers of the full test tier and
// runs the helpers that go with them: a real Apache Kafka broker and its
// command-line tools, a moto S3 endpoint, PostgreSQL and MariaDB sources
// with a Kafka Connect worker running Debezium's connectors, and the Python
// Delta readers (delta-rs, DuckDB, Spark) of scripts/py/deltaread.py.
//
// scripts/test.sh starts the servers and exports their addresses in the
// environment variables named by the Env* constants before it runs
// `go test -tags integration ./...`. Tests behind the `integration` build tag
// call these helpers; a helper whose variable is missing fails the test
// (it never skips), because a full-tier run without its servers is a broken
// run, not a passing one. The one exception is the Unity Catalog server,
// which is built from GitHub source: where test.sh could not have it, it says
// why in EnvUnityUnavailable and UnityURL skips with that reason. See
// docs/TESTING.md.
//
// The package is for tests only and carries no API-stability promise.
package fulltier

// Environment variables set by scripts/test.sh for the full tier.
const (
	// EnvKafkaBrokers holds the bootstrap address of the Kafka broker,
	// "127.0.0.1:PORT" (a comma-separated list in general).
	EnvKafkaBrokers = "CDC2DELTA_KAFKA_BROKERS"
	// EnvKafkaTool holds the path of scripts/setup/kafka-tool.sh, which runs
	// Kafka's own command-line tools (kafka-consumer-groups, kafka-topics, ...).
	EnvKafkaTool = "CDC2DELTA_KAFKA_TOOL"
	// EnvS3Endpoint holds the URL of the moto S3 server, "http://127.0.0.1:PORT".
	// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_REGION hold dummies.
	EnvS3Endpoint = "CDC2DELTA_S3_ENDPOINT"
	// EnvPython holds the python of the venv that has deltalake, duckdb,
	// pyspark with delta-spark, moto and fastavro.
	EnvPython = "CDC2DELTA_PYTHON"
	// EnvAutoCDCPython holds the python of the venv with pyspark 4.3, whose
	// AutoCDC computes SCD type 2 histories (scripts/setup/autocdc.sh).
	EnvAutoCDCPython = "CDC2DELTA_AUTOCDC_PYTHON"
	// EnvAutoCDCJar holds the path of Spark's catalyst test jar, whose
	// in-memory catalog holds AutoCDC's tables (scripts/setup/autocdc.sh).
	EnvAutoCDCJar = "CDC2DELTA_AUTOCDC_JAR"
	// EnvScripts holds the absolute path of scripts/py.
	EnvScripts = "CDC2DELTA_SCRIPTS"
	// EnvPostgresAddr holds the PostgreSQL server's "127.0.0.1:PORT" (user
	// postgres, trust authentication, wal_level=logical).
	EnvPostgresAddr = "CDC2DELTA_POSTGRES_ADDR"
	// EnvMariaDBAddr holds the MariaDB server's "127.0.0.1:PORT" (user cdc,
	// password cdc-secret, row-based binlog).
	EnvMariaDBAddr = "CDC2DELTA_MARIADB_ADDR"
	// EnvConnectURL holds the REST URL of the Kafka Connect worker,
	// "http://127.0.0.1:PORT", whose plugins are Debezium's PostgreSQL and
	// MariaDB connectors and which writes to the EnvKafkaBrokers broker.
	EnvConnectURL = "CDC2DELTA_CONNECT_URL"
	// EnvUnityURL holds the URL of the OSS Unity Catalog server,
	// "http://127.0.0.1:PORT" (no authorization, an empty database).
	EnvUnityURL = "CDC2DELTA_UNITY_URL"
	// EnvUnityUnavailable holds why scripts/test.sh runs without the Unity
	// Catalog server (set instead of EnvUnityURL when the server can be
	// neither reused from the cache nor built: no source, no GitHub).
	EnvUnityUnavailable = "CDC2DELTA_UNITY_UNAVAILABLE"
)
