//go:build integration

package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
)

// TestDashboardAndAlertsQueryARealPrometheus runs cdc2delta on the test broker
// with a control table, has a real Prometheus scrape it and load
// deploy/prometheus/alerts.yml, and evaluates every PromQL expression of the
// Grafana dashboard and of the rules through Prometheus's HTTP API: each must
// parse and evaluate, the core ones (lag, freshness, table state, completeness)
// must return data, and every rule must evaluate without error.
func TestDashboardAndAlertsQueryARealPrometheus(t *testing.T) {
	prefix := fmt.Sprintf("prom%d", time.Now().UnixNano())
	src := newCrashSource(t, fulltier.KafkaBrokers(t), prefix, dbzgen.WorkloadOptions{Seed: 45, Keys: 80, Snapshot: true, MaxTxEvents: 3})
	root := t.TempDir()
	metrics := closedPort(t)
	cfgPath := filepath.Join(root, "cdc2delta.yaml")
	require.NoError(t, os.WriteFile(cfgPath, fmt.Appendf(nil, `
kafka:
  brokers: [%q]
  group_id: %q
  topic_regex: '^%s\..*'
schema_registry: {url: %q}
tables: {path: %q}
control: {path: %q, interval: 1s}
batch: {max_records: 100, max_age: 100ms, min_records: 1}
metrics: {listen: %q}
`, fulltier.KafkaBrokers(t)[0], prefix+"-group", regexp.QuoteMeta(prefix), src.regURL,
		filepath.ToSlash(root)+"/tables/{database}/{schema}/{table}", filepath.ToSlash(root)+"/control", metrics), 0o600))
	tables := make([]crashTable, len(src.tables))
	for i, tb := range src.tables {
		d := tb.Def()
		tables[i] = crashTable{t: t, dir: filepath.Join(root, "tables", d.Database, d.Schema, d.Name)}
	}
	require.NoError(t, src.produce(t.Context(), 300))
	run := startRun(t, binary, cfgPath, filepath.Join(root, "run.log"))
	waitCaughtUp(t, tables, src.endOffsets(), run)
	// Changes keep coming while Prometheus scrapes, so rates have samples.
	stop := make(chan struct{})
	produced := src.produceUntil(t.Context(), stop, 20, 300*time.Millisecond)
	defer func() {
		close(stop)
		require.NoError(t, <-produced)
	}()

	rules, err := filepath.Abs("../../deploy/prometheus/alerts.yml")
	require.NoError(t, err)
	prom := fulltier.StartPrometheus(t, fmt.Sprintf(`
global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: [%q]
scrape_configs:
  - job_name: cdc2delta
    static_configs: [{targets: [%q]}]
`, rules, metrics))

	query := func(expr string) (status, errText string, results int) {
		resp, err := http.Get(prom + "/api/v1/query?query=" + url.QueryEscape(expr))
		require.NoError(t, err)
		defer resp.Body.Close()
		var body struct {
			Status string
			Error  string
			Data   struct{ Result []json.RawMessage }
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
		return body.Status, body.Error, len(body.Data.Result)
	}
	// Wait for enough scrapes that rate() over a 15 s window has two samples.
	require.True(t, poll(60*time.Second, 500*time.Millisecond, func() bool {
		_, _, n := query(`count_over_time(up{job="cdc2delta"}[1m]) >= 8`)
		return n == 1
	}), "prometheus did not scrape %s 8 times; log:\n%s", metrics, run.logTail())

	exprs := dashboardExprs(t)
	for _, e := range alertExprs(t, rules) {
		exprs = append(exprs, panelExpr{Title: "rule " + e.Title, Expr: e.Expr})
	}
	core := map[string]bool{"Records behind, by topic": true, "Source commit to Delta commit, p95": true,
		"Tables by state": true, "Control table: complete behind newest": true}
	for _, e := range exprs {
		var status, errText string
		var n int
		// The core ones must return data; a scrape or a commit may still be on its way.
		poll(30*time.Second, 500*time.Millisecond, func() bool {
			status, errText, n = query(e.Expr)
			return status != "success" || !core[e.Title] || n > 0
		})
		require.Equal(t, "success", status, "%s: %s: %s", e.Title, e.Expr, errText)
		if core[e.Title] {
			require.Positive(t, n, "%s returned no data: %s", e.Title, e.Expr)
			delete(core, e.Title)
		}
		t.Logf("%-45s %d series", e.Title, n)
	}
	require.Empty(t, core, "core panels missing from the dashboard")

	// Every metric named is one cdc2delta exports: in the scrape, or, for those
	// that appear only once their event happened, registered in processor/metrics.go.
	eventOnly := map[string]bool{"cdc2delta_events_dead_lettered_total": true, "cdc2delta_bad_input_total": true,
		"cdc2delta_maintenance_total": true, "cdc2delta_table_maintenance_failures": true, "cdc2delta_retries_total": true}
	source, err := os.ReadFile("../../processor/metrics.go")
	require.NoError(t, err)
	names := map[string]bool{}
	for _, e := range exprs {
		for _, n := range regexp.MustCompile(`cdc2delta_[a-z_]+`).FindAllString(e.Expr, -1) {
			names[strings.TrimSuffix(n, "_bucket")] = true
		}
	}
	for n := range names {
		if _, _, found := query(fmt.Sprintf(`count({__name__=~"%s(_bucket)?"})`, n)); found > 0 {
			continue
		}
		require.True(t, eventOnly[n], "%s is in no scrape and not known to appear only on an event", n)
		require.Contains(t, string(source), `"`+strings.TrimPrefix(n, "cdc2delta_")+`"`, "%s is not registered in processor/metrics.go", n)
	}

	// Prometheus itself evaluates every rule without an error.
	var rulesResp struct {
		Data struct {
			Groups []struct {
				Rules []struct{ Name, Health, LastError string }
			}
		}
	}
	require.True(t, poll(30*time.Second, 500*time.Millisecond, func() bool {
		resp, err := http.Get(prom + "/api/v1/rules")
		require.NoError(t, err)
		defer resp.Body.Close()
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&rulesResp))
		for _, g := range rulesResp.Data.Groups {
			for _, r := range g.Rules {
				if r.Health != "ok" {
					return false
				}
			}
		}
		return len(rulesResp.Data.Groups) == 1
	}), "rules not all healthy: %+v", rulesResp)
	require.Len(t, rulesResp.Data.Groups[0].Rules, len(alertExprs(t, rules)))
	require.Equal(t, exitOK, run.terminate(), run.logTail())
}

type panelExpr struct{ Title, Expr string }

// dashboardExprs are the dashboard's queries with its variables set as Grafana
// would: every job, a 15 s rate interval.
func dashboardExprs(t *testing.T) []panelExpr {
	t.Helper()
	data, err := os.ReadFile("../../deploy/grafana/cdc2delta.json")
	require.NoError(t, err)
	var d struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	require.NoError(t, json.Unmarshal(data, &d))
	vars := strings.NewReplacer(`"$job"`, `".+"`, "$__rate_interval", "15s")
	var out []panelExpr
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			require.NotContains(t, vars.Replace(tg.Expr), "$", "%s: a variable this test does not set", p.Title)
			out = append(out, panelExpr{Title: p.Title, Expr: vars.Replace(tg.Expr)})
		}
	}
	require.NotEmpty(t, out)
	return out
}

func alertExprs(t *testing.T, path string) []panelExpr {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var f struct {
		Groups []struct {
			Rules []struct {
				Alert string `yaml:"alert"`
				Expr  string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	require.NoError(t, yaml.Unmarshal(data, &f))
	var out []panelExpr
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			out = append(out, panelExpr{Title: r.Alert, Expr: r.Expr})
		}
	}
	return out
}
