//go:build integration

package unity

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// exchange is one request the client sent and the fake's answer, as
// scripts/py/ucspec_check.py reads them (one JSON object per line).
type exchange struct {
	Method      string `json:"method"`
	Path        string `json:"path"`
	Query       string `json:"query"`
	ContentType string `json:"content_type"`
	Body        string `json:"body"`
	Status      int    `json:"status"`
	Response    string `json:"response"`
}

// fakeUC plays the tables part of Unity Catalog's REST API the way the OSS
// server answers it (TableService, ErrorCode): POST /tables, GET and DELETE
// /tables/{full_name}, with UC's error codes and statuses. It keeps what
// clients send as JSON, not as this package's types, and records every
// exchange. Anything else is a 404 (and fails the spec check).
type fakeUC struct {
	srv *httptest.Server

	mu        sync.Mutex
	schemas   map[string]bool           // "catalog.schema"
	tables    map[string]map[string]any // full name → TableInfo
	exchanges []exchange
	nextID    int
}

func newFakeUC(t *testing.T, schemas ...string) *fakeUC {
	f := &fakeUC{schemas: map[string]bool{}, tables: map[string]map[string]any{}}
	for _, s := range schemas {
		f.schemas[s] = true
	}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeUC) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	defer f.mu.Unlock()
	status, answer := f.answer(r.Method, r.URL.Path, body)
	f.exchanges = append(f.exchanges, exchange{Method: r.Method, Path: r.URL.EscapedPath(), Query: r.URL.RawQuery,
		ContentType: r.Header.Get("Content-Type"), Body: string(body), Status: status, Response: string(answer)})
	if len(answer) > 0 {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(status)
	_, _ = w.Write(answer)
}

func ucError(status int, code, msg string) (int, []byte) {
	b, _ := json.Marshal(map[string]any{"error_code": code, "details": []any{}, "message": msg})
	return status, b
}

func (f *fakeUC) answer(method, path string, body []byte) (int, []byte) {
	rel, ok := strings.CutPrefix(path, apiPath)
	if !ok {
		return ucError(404, "NOT_FOUND", "no such endpoint: "+path)
	}
	switch {
	case method == http.MethodPost && rel == "/tables":
		var t map[string]any
		if err := json.Unmarshal(body, &t); err != nil {
			return ucError(400, "INVALID_ARGUMENT", "bad request body: "+err.Error())
		}
		cat, _ := t["catalog_name"].(string)
		sch, _ := t["schema_name"].(string)
		name, _ := t["name"].(string)
		if !f.schemas[cat+"."+sch] {
			return ucError(404, "SCHEMA_NOT_FOUND", "Schema not found: "+cat+"."+sch)
		}
		full := cat + "." + sch + "." + name
		if _, ok := f.tables[full]; ok {
			return ucError(400, "TABLE_ALREADY_EXISTS", "Table already exists: "+full)
		}
		f.nextID++
		now := time.Now().UnixMilli()
		t["table_id"] = fmt.Sprintf("00000000-0000-0000-0000-%012d", f.nextID)
		t["created_at"], t["updated_at"] = now, now
		if t["properties"] == nil {
			t["properties"] = map[string]any{}
		}
		f.tables[full] = t
		b, _ := json.Marshal(t)
		return 200, b
	case strings.HasPrefix(rel, "/tables/") && (method == http.MethodGet || method == http.MethodDelete):
		full, err := url.PathUnescape(strings.TrimPrefix(rel, "/tables/"))
		if err != nil {
			return ucError(400, "INVALID_ARGUMENT", err.Error())
		}
		t, ok := f.tables[full]
		if !ok {
			return ucError(404, "TABLE_NOT_FOUND", "Table not found: "+full)
		}
		if method == http.MethodDelete {
			delete(f.tables, full)
			return 200, nil
		}
		b, _ := json.Marshal(t)
		return 200, b
	}
	return ucError(404, "NOT_FOUND", "no such endpoint: "+method+" "+path)
}

// recorded returns the exchanges so far.
func (f *fakeUC) recorded() []exchange {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]exchange(nil), f.exchanges...)
}

// writeExchanges writes exchanges as JSON lines to a new file under dir.
func writeExchanges(t *testing.T, dir string, xs []exchange) string {
	t.Helper()
	var b strings.Builder
	for _, x := range xs {
		line, err := json.Marshal(x)
		require.NoError(t, err)
		b.Write(line)
		b.WriteByte('\n')
	}
	p := filepath.Join(dir, "requests.jsonl")
	require.NoError(t, os.WriteFile(p, []byte(b.String()), 0o644))
	return p
}

// recorder is an http.RoundTripper that records every exchange, so that
// requests to the real server are spec-checked too.
type recorder struct {
	mu        sync.Mutex
	exchanges []exchange
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		var err error
		if body, err = io.ReadAll(req.Body); err != nil {
			return nil, err
		}
		req.Body.Close()
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	answer, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(answer))
	r.mu.Lock()
	defer r.mu.Unlock()
	r.exchanges = append(r.exchanges, exchange{Method: req.Method, Path: req.URL.EscapedPath(), Query: req.URL.RawQuery,
		ContentType: req.Header.Get("Content-Type"), Body: string(body), Status: resp.StatusCode, Response: string(answer)})
	return resp, nil
}

func (r *recorder) recorded() []exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]exchange(nil), r.exchanges...)
}
