//go:build integration

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog/azstore"
	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
)

// azureTables writes a run configuration with its tables in container on
// the Azurite at endpoint (static membership, so that a restart takes a
// killed member's place at once), storage.azure fields azure added and the sections
// extra, and returns its path and the tables.
func azureTables(t *testing.T, src *crashSource, broker, prefix, endpoint, container, azure, extra string) (string, []crashTable) {
	t.Helper()
	root := t.TempDir()
	cfgPath := filepath.Join(root, "cdc2delta.yaml")
	require.NoError(t, os.WriteFile(cfgPath, fmt.Appendf(nil, `
kafka:
  brokers: [%q]
  group_id: %q
  instance_id: %q
  topic_regex: '^%s\..*'
schema_registry: {url: %q}
tables: {path: %q}
storage: {azure: {endpoint: %q, account_key: %q%s}}
batch: {max_records: 200, max_age: 100ms, min_records: 1}
%s`, broker, prefix+"-group", prefix+"-instance", regexp.QuoteMeta(prefix), src.regURL, "az://"+container+"/tables/{database}/{schema}/{table}",
		endpoint, fulltier.AzuriteKey, azure, extra), 0o600))
	c, err := azstore.NewClient(t.Context(), azstore.Options{Endpoint: endpoint, Credentials: azstore.Credentials{AccountKey: fulltier.AzuriteKey}})
	require.NoError(t, err)
	tables := make([]crashTable, len(src.tables))
	for i, tb := range src.tables {
		d := tb.Def()
		prefix := fmt.Sprintf("tables/%s/%s/%s", d.Database, d.Schema, d.Name)
		st, err := c.Store(container, prefix)
		require.NoError(t, err)
		tables[i] = crashTable{t: t, dir: "az://" + container + "/" + prefix, st: st}
	}
	return cfgPath, tables
}

// TestAzureCrashRecovery runs the binary with its tables on Azurite while a
// workload is produced, SIGKILLs it at random moments (in commits among
// them) and restarts it, then lets it catch up: the tables must equal the
// source, nothing lost or applied twice, and delta-rs and DuckDB, reading
// az:// with an endpoint override, must see the same rows.
func TestAzureCrashRecovery(t *testing.T) {
	brokers := fulltier.KafkaBrokers(t)
	endpoint := fulltier.AzureEndpoint(t)
	seed := envUint(t, envCrashSeed, uint64(time.Now().UnixNano()))
	kills := int(envUint(t, envCrashKills, 6))
	t.Logf("seed %d (rerun with %s=%d)", seed, envCrashSeed, seed)
	rng := rand.New(rand.NewPCG(seed, 0x617a757265))

	prefix := fmt.Sprintf("azcrash%d", time.Now().UnixNano())
	src := newCrashSource(t, brokers, prefix, dbzgen.WorkloadOptions{
		Seed: seed, Keys: 200, Snapshot: true, Redeliver: 0.05, MaxTxEvents: 3})
	cfgPath, tables := azureTables(t, src, brokers[0], prefix, endpoint, fulltier.NewContainer(t, endpoint), "", "metrics: {listen: \"\"}\n")
	root := filepath.Dir(cfgPath)
	ctx := t.Context()
	require.NoError(t, src.produce(ctx, 300))
	stopProducing := src.produceInBackground(ctx, 10, 50*time.Millisecond)
	committing, commits := 0, 0
	for i := range kills {
		delay := 500*time.Millisecond + time.Duration(rng.Int64N(int64(2500*time.Millisecond)))
		run := startRun(t, binary, cfgPath, filepath.Join(root, fmt.Sprintf("run-%02d.log", i)))
		time.Sleep(delay) // kept: the kill's moment is random on purpose
		run.kill()
		c := 0
		for _, tb := range tables {
			c += len(tb.commitVersions())
		}
		if c > commits {
			committing++
		}
		t.Logf("kill %d after %v: commits %d (+%d)", i+1, delay.Round(time.Millisecond), c, c-commits)
		commits = c
	}
	stopProducing()
	ends := src.endOffsets()
	final := startRun(t, binary, cfgPath, filepath.Join(root, "run-final.log"))
	waitCaughtUp(t, tables, ends, final)
	require.Equal(t, exitOK, final.terminate(), "SIGTERM must end the run cleanly; log:\n%s", final.logTail())
	require.Positive(t, committing, "no kill hit a run that was committing")
	requireTablesMatchSource(t, src, tables, ends)
	requireReadersMatchSource(t, src, tables, ends, fulltier.DeltaRS, fulltier.DuckDB)
}

// TestFrozenAzureStallsWithinBudget runs the binary against the real broker
// and a private Azurite, shows that it applies, then freezes Azurite
// (SIGSTOP). Within the retry budget plus one request timeout every table
// must be stalled in /readyz (503), and the log must name Azure, the
// endpoint and the operation that hung. After SIGCONT everything must be
// applied exactly once.
func TestFrozenAzureStallsWithinBudget(t *testing.T) {
	const (
		requestTimeout = 2 * time.Second
		budget         = 6 * time.Second
	)
	brokers := fulltier.KafkaBrokers(t)
	az := fulltier.StartAzurite(t)
	container := fulltier.NewContainer(t, az.Endpoint)
	prefix := fmt.Sprintf("frozenaz%d", time.Now().UnixNano())
	src := newCrashSource(t, brokers, prefix, dbzgen.WorkloadOptions{Seed: 43, Keys: 100, Snapshot: true, MaxTxEvents: 3})
	metrics := closedPort(t)
	cfgPath, tables := azureTables(t, src, brokers[0], prefix, az.Endpoint, container,
		fmt.Sprintf(", request_timeout: %s", requestTimeout), fmt.Sprintf("retry: {budget: %s}\nmetrics: {listen: %q}\n", budget, metrics))
	run := startFrozenRun(t, src, tables, metrics, cfgPath, filepath.Dir(cfgPath))

	run.stallsWhileFrozen(az, budget, requestTimeout, storeStall{name: "Azure", at: "Azure Blob at " + az.Endpoint,
		ops: "GetBlob|PutBlob|ListBlobs|DeleteBlob", object: container + "/"})
}

// TestAzureTable runs table commands on an abfss:// table on Azurite, with
// the account key and the endpoint override from the environment, as a
// shell sets them; a wrong key is a runtime failure that does not print it.
func TestAzureTable(t *testing.T) {
	endpoint := fulltier.AzureEndpoint(t)
	container := fulltier.NewContainer(t, endpoint)
	dir := t.TempDir()
	testTable(t, dir)
	st, err := azstore.New(t.Context(), azstore.Options{Container: container, Prefix: "sales/orders", Endpoint: endpoint,
		Credentials: azstore.Credentials{AccountKey: fulltier.AzuriteKey}})
	require.NoError(t, err)
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p) // p is under dir
		return st.Put(t.Context(), filepath.ToSlash(rel), data)
	}))
	vars := map[string]string{"CDC2DELTA_AZURE_ENDPOINT": endpoint, "AZURE_STORAGE_ACCOUNT_KEY": fulltier.AzuriteKey}
	azcli := func(args ...string) result {
		var out, errb bytes.Buffer
		code := runEnv(t.Context(), append([]string{"cdc2delta"}, args...), &env{stdout: &out, stderr: &errb,
			lookup: func(k string) (string, bool) { v, ok := vars[k]; return v, ok }})
		return result{code, out.String(), errb.String()}
	}
	// The URL names a real account's host; the override sends it to Azurite.
	loc := "abfss://" + container + "@" + fulltier.AzuriteAccount + ".dfs.core.windows.net/sales/orders"

	r := azcli("describe", "--json", loc)
	require.Equal(t, exitOK, r.code, r.stderr)
	var d tableDescription
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &d))
	require.EqualValues(t, 2, d.Version)
	require.EqualValues(t, 4, *d.NumRows)
	r = azcli("update", loc, "--set", "amount = amount + 1", "--where", "id <= 2")
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "updated 1 row")
	r = azcli("optimize", loc)
	require.Equal(t, exitOK, r.code, r.stderr)
	r = azcli("history", loc)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "OPTIMIZE")

	const wrong = "d3Jvbmcga2V5IHdyb25nIGtleSB3cm9uZyBrZXkgd3Jvbmcga2V5IHdyb25nIGtleQ=="
	vars["AZURE_STORAGE_ACCOUNT_KEY"] = wrong
	r = azcli("describe", loc)
	require.Equal(t, exitFailure, r.code, r.stderr)
	require.Contains(t, r.stderr, "HTTP 403")
	require.NotContains(t, r.stderr+r.stdout, wrong)
}
