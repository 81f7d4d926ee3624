package fulltier

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Postgres is the full tier's PostgreSQL server, reached with psql.
type Postgres struct {
	t    testing.TB
	Host string
	Port string
}

// PostgresServer returns the full tier's PostgreSQL server.
func PostgresServer(t testing.TB) Postgres {
	t.Helper()
	host, port := splitAddr(t, EnvPostgresAddr)
	return Postgres{t: t, Host: host, Port: port}
}

// Exec runs sql (one or more statements, stopping at the first error) in
// database db and returns psql's unaligned, tab-separated output without
// headers: one line per row, NULL as the empty string.
func (p Postgres) Exec(db, sql string) string {
	p.t.Helper()
	return run(p.t, sql, "psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-A", "-t", "-F", "\t",
		"-h", p.Host, "-p", p.Port, "-U", "postgres", "-d", db)
}

// MariaDB is the full tier's MariaDB server, reached with the mariadb client.
type MariaDB struct {
	t    testing.TB
	Host string
	Port string
}

// MariaDB user and password that scripts/setup/mariadb.sh creates, with
// every privilege (Debezium's binlog reader needs REPLICATION SLAVE/CLIENT).
const (
	MariaDBUser     = "cdc"
	MariaDBPassword = "cdc-secret"
)

// MariaDBServer returns the full tier's MariaDB server.
func MariaDBServer(t testing.TB) MariaDB {
	t.Helper()
	host, port := splitAddr(t, EnvMariaDBAddr)
	return MariaDB{t: t, Host: host, Port: port}
}

// Exec runs sql in database db ("" for none) and returns the client's batch
// output without headers: tab-separated, one line per row, NULL as "NULL".
func (m MariaDB) Exec(db, sql string) string {
	m.t.Helper()
	args := []string{"--no-defaults", "--batch", "--skip-column-names", "--raw",
		"-h", m.Host, "-P", m.Port, "-u", MariaDBUser, "-p" + MariaDBPassword}
	if db != "" {
		args = append(args, db)
	}
	return run(m.t, sql, "mariadb", args...)
}

func splitAddr(t testing.TB, key string) (host, port string) {
	t.Helper()
	addr := env(t, key)
	host, port, ok := strings.Cut(addr, ":")
	if !ok {
		t.Fatalf("fulltier: %s=%q is not host:port", key, addr)
	}
	return host, port
}

// run runs a database client with stdin as its script, failing the test on
// a non-zero exit with the client's standard error.
func run(t testing.TB, stdin, name string, args ...string) string {
	t.Helper()
	// Not t.Context(): cleanups run clients after it is done.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(t.Context()), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("fulltier: %s: %v\nstderr:\n%s\nscript:\n%s", name, err, stderr.String(), stdin)
	}
	return stdout.String()
}
