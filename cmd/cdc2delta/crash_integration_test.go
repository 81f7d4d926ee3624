//go:build integration

package main

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
	"github.com/cdc2delta/cdc2delta/processor/merge"
)

// Environment knobs of TestCrashRecovery, to reproduce a failure
// (CDC2DELTA_CRASH_SEED, logged by every run) or to crash more often.
const (
	envCrashSeed  = "CDC2DELTA_CRASH_SEED"
	envCrashKills = "CDC2DELTA_CRASH_KILLS"
)

// TestCrashRecovery runs the real binary against the real broker while a
// Debezium workload (three tables, snapshot, updates, deletes, key changes,
// duplicates and out-of-order re-deliveries) is produced in the
// background, SIGKILLs it at random moments and restarts it each time,
// then lets it catch up and stops it with SIGTERM. Whatever instant the
// kills hit (startup, between batches, while data files are written,
// between the Delta and the group commit), the tables must equal the
// source: nothing lost, nothing applied twice.
func TestCrashRecovery(t *testing.T) { runCrashRecovery(t, 1, 20) }

// TestCrashRecoveryTwoInstances does the same with two instances of one
// group, which split each table's three partitions and so share every
// table (ADR 0036): they lose version races to each other, rebase and
// re-plan, and each is SIGKILLed at its own random moment. Both append to
// each table's change log and both keep the control table.
func TestCrashRecoveryTwoInstances(t *testing.T) { runCrashRecovery(t, 2, 10) }

// crashStorage is where a crash test's tables live: local directories under the test's
// root when zero, or an object store.
type crashStorage struct {
	tablesURL string // the tables' root URL
	config    string // the run configuration's storage section
	// open returns the store of a table's prefix under tablesURL.
	open func(t *testing.T, prefix string) deltalog.Store
}

func runCrashRecovery(t *testing.T, instances int, defaultKills uint64) {
	runCrashRecoveryOn(t, instances, defaultKills, crashStorage{})
}

func runCrashRecoveryOn(t *testing.T, instances int, defaultKills uint64, st crashStorage) {
	brokers := fulltier.KafkaBrokers(t)
	seed := envUint(t, envCrashSeed, uint64(time.Now().UnixNano()))
	kills := int(envUint(t, envCrashKills, defaultKills))
	t.Logf("seed %d (rerun with %s=%d)", seed, envCrashSeed, seed)
	rng := rand.New(rand.NewPCG(seed, 0x6832342d6372))
	began := time.Now()

	prefix := fmt.Sprintf("h24crash%d", time.Now().UnixNano())
	group := prefix + "-group"
	src := newCrashSource(t, brokers, prefix, dbzgen.WorkloadOptions{
		Seed: seed, Keys: 300, Snapshot: true, Redeliver: 0.05, MaxTxEvents: 3, KeyChangeRatio: 0.02})
	root := t.TempDir()
	cfgPaths := make([]string, instances)
	for i := range cfgPaths {
		cfgPaths[i] = writeCrashConfig(t, root, brokers[0], prefix, group, src.regURL, i, st)
	}
	tables := make([]crashTable, len(src.tables))
	for i, tb := range src.tables {
		d := tb.Def()
		tables[i] = crashTable{t: t, dir: filepath.Join(root, "tables", d.Database, d.Schema, d.Name)}
		if st.open != nil {
			p := path.Join(prefix, d.Database, d.Schema, d.Name)
			tables[i] = crashTable{t: t, dir: st.tablesURL + "/" + p, st: st.open(t, p), changes: st.open(t, p+"_changes")}
		}
	}
	startAll := func(name string) []*binaryRun {
		runs := make([]*binaryRun, instances)
		for j, cfg := range cfgPaths {
			runs[j] = startRun(t, binary, cfg, filepath.Join(root, fmt.Sprintf("run-%s-%d.log", name, j)))
		}
		return runs
	}
	// shared counts the tables that more than one of runs was assigned
	// partitions of.
	shared := func(runs []*binaryRun) int {
		owners := map[string]int{}
		for _, r := range runs {
			for tb := range r.assignedTables() {
				owners[tb]++
			}
		}
		n := 0
		for _, c := range owners {
			if c > 1 {
				n++
			}
		}
		return n
	}
	logCount := func(runs []*binaryRun, s string) int {
		n := 0
		for _, r := range runs {
			n += r.logCount(s)
		}
		return n
	}

	ctx := t.Context()
	require.NoError(t, src.produce(ctx, 300))
	stopProducing := src.produceInBackground(ctx, 10, 50*time.Millisecond)

	midCommit, beforeGroupCommit, orphans, commits, committing, indexOpens, sharing := 0, 0, 0, 0, 0, 0, 0
	for i := range kills {
		delay := 200*time.Millisecond + time.Duration(rng.Int64N(int64(2800*time.Millisecond)))
		runs := startAll(fmt.Sprintf("%02d", i))
		time.Sleep(delay) // kept: the kill's moment is random on purpose
		// Each instance dies at its own moment: the other goes on alone
		// for up to half a second, taking over its partitions or not.
		for _, j := range rng.Perm(instances) {
			runs[j].kill()
			time.Sleep(time.Duration(rng.Int64N(int64(500 * time.Millisecond)))) // kept: likewise
		}
		n, c := 0, 0
		for _, tb := range tables {
			n += tb.orphans()
			c += len(tb.commitVersions())
		}
		if n > orphans {
			midCommit++
		}
		if c > commits {
			committing++
		}
		indexOpens += logCount(runs, "key index opened")
		sharing += shared(runs)
		behind := groupBehind(t, src, tables, group)
		if behind > 0 {
			beforeGroupCommit++
		}
		t.Logf("kill %2d after %v: commits %d (+%d), orphan data files %d (+%d), partitions assigned %d, group offsets behind the txn %d, failed group commits %d",
			i+1, delay.Round(time.Millisecond), c, c-commits, n, n-orphans, logCount(runs, "partition assigned"), behind,
			logCount(runs, "group offset commit failed"))
		orphans, commits = n, c
	}
	stopProducing()
	ends := src.endOffsets()

	final := startAll("final")
	waitCaughtUp(t, tables, ends, final...)
	for _, r := range final {
		require.Equal(t, exitOK, r.terminate(), "SIGTERM must end the run cleanly; log:\n%s", r.logTail())
	}

	requireTablesMatchSource(t, src, tables, ends)
	if instances > 1 {
		require.Positive(t, sharing+shared(final), "the instances never shared a table")
	}
	// The restarts opened their indexes from manifests the kills left.
	require.Positive(t, indexOpens+logCount(final, "key index opened"), "no restart opened a key index from its manifest")

	// The group's committed offsets are txn + 1, for lag tooling.
	committed, err := src.adm.FetchOffsets(ctx, group)
	require.NoError(t, err)
	require.NoError(t, committed.Error())
	for tp, end := range ends {
		o, ok := committed.Lookup(tp.Topic, tp.Partition)
		require.True(t, ok, "no group offset for %s", tp.AppID())
		require.Equal(t, end, o.At, "group offset of %s is txn+1", tp.AppID())
	}

	// An independent reader sees the same rows and txns; on an object store, DuckDB too.
	readers := []fulltier.Engine{fulltier.DeltaRS}
	if st.open != nil {
		readers = append(readers, fulltier.DuckDB)
	}
	requireReadersMatchSource(t, src, tables, ends, readers...)
	checkCrashControl(t, brokers, root, src, tables)
	t.Logf("instances %d, kills %d (%d after the run committed), mid-commit kills %d (orphan data files left %d, unread), "+
		"kills between a Delta and its group commit %d, key indexes opened from a manifest %d, tables shared by instances %d, events %d, runtime %v",
		instances, kills, committing, midCommit, orphans, beforeGroupCommit, indexOpens, sharing, src.produced, time.Since(began).Round(time.Second))
}

// writeCrashConfig writes the run configuration: small batches so that
// commits are frequent and kills often land in one, static membership so
// that a restart takes the killed member's place without waiting for its
// session to expire, and the key index on disk, flushed every 50 changed
// keys, so that kills land in flushes and restarts open from manifests
// (ADR 0034), with the change log and the control table. Instance n has its
// own instance id; every instance keeps the control table.
func writeCrashConfig(t *testing.T, root, broker, prefix, group, regURL string, n int, st crashStorage) string {
	t.Helper()
	tablesPath, indexDir := filepath.ToSlash(root)+"/tables/{database}/{schema}/{table}", ""
	if st.open != nil {
		tablesPath, indexDir = st.tablesURL+"/"+prefix+"/{database}/{schema}/{table}", filepath.Join(root, fmt.Sprintf("index-%d", n))
	}
	path := filepath.Join(root, fmt.Sprintf("cdc2delta-%d.yaml", n))
	require.NoError(t, os.WriteFile(path, fmt.Appendf(nil, `
kafka:
  brokers: [%q]
  group_id: %q
  instance_id: %q
  topic_regex: '^%s\..*'
schema_registry: {url: %q}
tables: {path: %q, defaults: {change_log: true}}
batch: {max_records: 200, max_age: 100ms, min_records: 1}
memory: {key_index: disk, key_index_memory_keys: 50, key_index_dir: %q}
control:
  path: %q
  interval: 200ms
  groups: [{name: all, tables: [sales.dbo.customers, sales.dbo.orders, sales.dbo.inventory]}]
metrics: {listen: ""}
log: {level: info}
%s
`, broker, group, fmt.Sprintf("%s-instance-%d", prefix, n), regexp.QuoteMeta(prefix), regURL,
		tablesPath, indexDir, filepath.ToSlash(root)+"/control", st.config), 0o600))
	return path
}

// waitCaughtUp waits until every table's txn is at its partitions' last
// offsets, failing early if the run exits.
func waitCaughtUp(t *testing.T, tables []crashTable, ends map[cdctable.TopicPartition]int64, runs ...*binaryRun) {
	t.Helper()
	state := "no table yet"
	var exited *binaryRun
	caughtUp := poll(3*time.Minute, 250*time.Millisecond, func() bool {
		for _, run := range runs {
			select {
			case <-run.done:
				exited = run
				return true
			default:
			}
		}
		state = lagging(t, tables, ends)
		return state == ""
	})
	if exited != nil {
		t.Fatalf("run exited while catching up: %v; log:\n%s", exited.err, exited.logTail())
	}
	if caughtUp {
		return
	}
	tails := ""
	for _, run := range runs {
		tails += run.logTail()
	}
	t.Fatalf("not caught up: %s; logs:\n%s", state, tails)
}

// lagging describes the first partition whose table txn is behind its
// last offset, or returns "".
func lagging(t *testing.T, tables []crashTable, ends map[cdctable.TopicPartition]int64) string {
	txns := map[string]int64{}
	for _, tb := range tables {
		snap := tb.snapshot()
		if snap == nil {
			return tb.dir + " has no snapshot"
		}
		for app, txn := range snap.Txns() {
			txns[app] = txn.Version
		}
	}
	for tp, end := range ends {
		if v, ok := txns[tp.AppID()]; end > 0 && (!ok || v != end-1) {
			return fmt.Sprintf("%s: txn %d (%v), last offset %d", tp.AppID(), v, ok, end-1)
		}
	}
	return ""
}

// groupBehind counts the partitions whose group offset is below their
// table's txn + 1: a kill between a Delta commit and its group commit.
func groupBehind(t *testing.T, src *crashSource, tables []crashTable, group string) int {
	t.Helper()
	committed, err := src.adm.FetchOffsets(t.Context(), group)
	require.NoError(t, err)
	require.NoError(t, committed.Error())
	n := 0
	for _, tb := range tables {
		snap := tb.snapshot()
		if snap == nil {
			continue
		}
		for app, txn := range snap.Txns() {
			tp := appPartition(t, app)
			if o, ok := committed.Lookup(tp.Topic, tp.Partition); !ok || o.At < txn.Version+1 {
				n++
			}
		}
	}
	return n
}

// appPartition parses a txn app id back into its partition.
func appPartition(t *testing.T, app string) cdctable.TopicPartition {
	t.Helper()
	m := regexp.MustCompile(`^cdc2delta/(.+)/(\d+)$`).FindStringSubmatch(app)
	require.NotNil(t, m, "app id %q", app)
	p, err := strconv.ParseInt(m[2], 10, 32)
	require.NoError(t, err)
	return cdctable.TopicPartition{Topic: m[1], Partition: int32(p)}
}

// envUint reads an unsigned integer knob, def when unset.
func envUint(t *testing.T, name string, def uint64) uint64 {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	v, err := strconv.ParseUint(s, 10, 64)
	require.NoError(t, err, "%s", name)
	return v
}

// binaryRun is one `cdc2delta run` process, its output in a log file.
type binaryRun struct {
	t       *testing.T
	cmd     *exec.Cmd
	logPath string
	done    chan struct{} // closed when the process has exited
	err     error         // Wait's error, set before done closes
}

func startRun(t *testing.T, bin, cfgPath, logPath string) *binaryRun {
	t.Helper()
	return startCmd(t, exec.Command(bin, "run", "--config", cfgPath), logPath)
}

// startCmd starts cmd with its output to logPath; the test's end kills it.
func startCmd(t *testing.T, cmd *exec.Cmd, logPath string) *binaryRun {
	t.Helper()
	logf, err := os.Create(logPath)
	require.NoError(t, err)
	cmd.Stdout, cmd.Stderr = logf, logf
	require.NoError(t, cmd.Start())
	r := &binaryRun{t: t, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() {
		r.err = cmd.Wait()
		logf.Close()
		close(r.done)
	}()
	t.Cleanup(func() {
		select {
		case <-r.done:
		default:
			_ = cmd.Process.Kill()
			<-r.done
		}
	})
	return r
}

// kill SIGKILLs the process and waits for it; the process must still be
// running (an early exit is a failure of the binary).
func (r *binaryRun) kill() {
	r.t.Helper()
	select {
	case <-r.done:
		r.t.Fatalf("run exited before the kill: %v; log:\n%s", r.err, r.logTail())
	default:
	}
	require.NoError(r.t, r.cmd.Process.Signal(syscall.SIGKILL))
	<-r.done
}

// terminate sends SIGTERM and returns the exit code.
func (r *binaryRun) terminate() int {
	r.t.Helper()
	require.NoError(r.t, r.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case <-r.done:
	case <-time.After(2 * time.Minute):
		r.t.Fatalf("run did not stop on SIGTERM; log:\n%s", r.logTail())
	}
	var ee *exec.ExitError
	if errors.As(r.err, &ee) {
		return ee.ExitCode()
	}
	require.NoError(r.t, r.err)
	return 0
}

// logCount counts the run's log lines that contain s.
func (r *binaryRun) logCount(s string) int {
	data, err := os.ReadFile(r.logPath)
	require.NoError(r.t, err)
	return strings.Count(string(data), s)
}

// assignedTables are the tables the run's log says it was assigned
// partitions of.
func (r *binaryRun) assignedTables() map[string]bool {
	data, err := os.ReadFile(r.logPath)
	require.NoError(r.t, err)
	out := map[string]bool{}
	for _, m := range assignedLine.FindAllStringSubmatch(string(data), -1) {
		out[m[1]] = true
	}
	return out
}

var assignedLine = regexp.MustCompile(`msg="partition assigned" table=(\S+)`)

// logTail returns the end of the run's log.
func (r *binaryRun) logTail() string {
	data, err := os.ReadFile(r.logPath)
	if err != nil {
		return err.Error()
	}
	const keep = 6000
	if len(data) > keep {
		data = data[len(data)-keep:]
	}
	return string(data)
}

// requireTablesMatchSource checks that nothing was lost or applied twice:
// each table equals the source, no key appears twice, the txn is at each
// partition's last offset and no commit carries a txn at or below an
// earlier one (a re-applied batch).
func requireTablesMatchSource(t *testing.T, src *crashSource, tables []crashTable, ends map[cdctable.TopicPartition]int64) {
	t.Helper()
	for i, tb := range tables {
		def := src.tables[i].Def()
		cols := compareColumns(def)
		got, perKey := tb.rows(cols, def.Key)
		want := modelRows(src.rows(src.tables[i]), cols)
		require.NotEmpty(t, want)
		require.Equal(t, want, got, "table %s", def.Name)
		for k, n := range perKey {
			require.Equal(t, 1, n, "table %s: key %s appears %d times", def.Name, k, n)
		}
		snap := tb.snapshot()
		for p := range int32(crashPartitions) {
			tp := cdctable.TopicPartition{Topic: src.tables[i].Topic(), Partition: p}
			v, ok := snap.TxnVersion(tp.AppID())
			require.True(t, ok, "%s has no txn", tp.AppID())
			require.Equal(t, ends[tp]-1, v, "%s: txn is the last offset", tp.AppID())
		}
		rep := tb.walkLog()
		require.Empty(t, rep.txnRegressions, "table %s: a batch was applied twice", def.Name)
		// No gaps: commit files 0..N, N the latest version.
		require.Equal(t, snap.Version()+1, int64(rep.versions), "table %s: the log has gaps", def.Name)
		// The table keeps its own contract, and the key index on disk agrees.
		vrep, err := merge.VerifyTable(t.Context(), tb.store(), merge.VerifyOptions{IndexDir: localIndexDir(tb.dir)})
		require.NoError(t, err, "table %s: verify", def.Name)
		require.Empty(t, vrep.Problems, "table %s: verify: %s", def.Name, vrep.Summary())
		t.Logf("table %s: %d rows, %d versions", def.Name, len(got), rep.versions)
	}
}

// requireReadersMatchSource reads every table with each engine, in one
// reader process: each must see the source's rows, and delta-rs (which
// reports them) the txns at the last offsets.
func requireReadersMatchSource(t *testing.T, src *crashSource, tables []crashTable, ends map[cdctable.TopicPartition]int64, engines ...fulltier.Engine) {
	t.Helper()
	var reqs []fulltier.Request
	for _, e := range engines {
		for i, tb := range tables {
			opts := fulltier.ReadOptions{RowsOnly: e != fulltier.DeltaRS}
			if e == fulltier.DeltaRS {
				for p := range int32(crashPartitions) {
					opts.AppIDs = append(opts.AppIDs, cdctable.TopicPartition{Topic: src.tables[i].Topic(), Partition: p}.AppID())
				}
				// The filter sends delta-rs through its DataFusion reader,
				// which applies deletion vectors.
				opts.Filter = "true"
			}
			reqs = append(reqs, fulltier.Request{Engine: e, Path: tb.dir, ReadOptions: opts})
		}
	}
	for j, read := range fulltier.Read(t, reqs...) {
		i := j % len(tables)
		def := src.tables[i].Def()
		require.Empty(t, read.Err, "%s reading %s", read.Engine, def.Name)
		cols := compareColumns(def)
		got := make([]string, 0, len(read.Rows))
		for _, r := range read.Rows {
			got = append(got, renderRow(cols, func(c string) any { return r[c] }))
		}
		want := modelRows(src.rows(src.tables[i]), cols)
		require.ElementsMatch(t, want, got, "%s rows of %s", read.Engine, def.Name)
		if read.Engine != fulltier.DeltaRS {
			continue
		}
		require.Len(t, read.Txn, crashPartitions, "delta-rs txns of %s", def.Name)
		for app, v := range read.Txn {
			tp := appPartition(t, app)
			require.NotNil(t, v, "delta-rs txn %s", app)
			require.Equal(t, ends[tp]-1, *v, "delta-rs txn %s", app)
		}
	}
}
