// Package unity registers Delta tables in Unity Catalog (the OSS server
// and Databricks) over its REST API, /api/2.1/unity-catalog: EXTERNAL
// tables with data_source_format DELTA, their columns with type_name,
// type_text, type_json and position, under a bearer token.
package unity

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/cdc2delta/cdc2delta/internal/urlcred"
	"github.com/cdc2delta/cdc2delta/processor/catalog"
)

// apiPath is the REST API's root below the server URL.
const apiPath = "/api/2.1/unity-catalog"

// Options configure a Unity Catalog client.
type Options struct {
	// Endpoint is the server's URL (https://host[:port]); the API is
	// under /api/2.1/unity-catalog.
	Endpoint string
	// Token is the bearer token ("" sends none: an OSS server without
	// authorization).
	Token string
	// HTTPClient (default: a client without timeout; each call's context
	// bounds it).
	HTTPClient *http.Client
}

// Catalog is a Unity Catalog server.
type Catalog struct {
	base   string
	token  string
	client *http.Client
	name   string // for errors, credentials redacted
}

var _ catalog.Catalog = (*Catalog)(nil)

// New builds the client; it does not contact the server.
func New(o Options) (*Catalog, error) {
	u, err := url.Parse(o.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("unity: endpoint %q is not an http(s)://host[:port] URL", urlcred.Redact(o.Endpoint))
	}
	c := &Catalog{base: strings.TrimRight(o.Endpoint, "/") + apiPath, token: o.Token, client: o.HTTPClient,
		name: "Unity Catalog at " + urlcred.Redact(o.Endpoint)}
	if c.client == nil {
		c.client = &http.Client{}
	}
	return c, nil
}

// Name is how errors name the server.
func (c *Catalog) Name() string { return c.name }

func threeParts(n catalog.Name) error {
	if n.Catalog == "" || n.Schema == "" || n.Table == "" {
		return fmt.Errorf("unity: table name %q must have three parts, catalog.schema.table", n.String())
	}
	return nil
}

// Lookup returns the entry under n, or an error wrapping
// catalog.ErrNotFound.
func (c *Catalog) Lookup(ctx context.Context, n catalog.Name) (catalog.Entry, error) {
	if err := threeParts(n); err != nil {
		return catalog.Entry{}, err
	}
	var t tableInfo
	if err := c.do(ctx, http.MethodGet, "/tables/"+url.PathEscape(n.String()), nil, &t); err != nil {
		return catalog.Entry{}, fmt.Errorf("unity: looking up %s in %s: %w", n, c.name, err)
	}
	e, err := entryOf(n, t)
	if err != nil {
		return catalog.Entry{}, fmt.Errorf("unity: reading %s from %s: %w", n, c.name, err)
	}
	return e, nil
}

// Create registers e as an EXTERNAL DELTA table, or fails wrapping
// catalog.ErrExists when the name is taken (catalog.ErrNotFound: no such
// catalog or schema).
func (c *Catalog) Create(ctx context.Context, e catalog.Entry) error {
	if err := threeParts(e.Name); err != nil {
		return err
	}
	req, err := createRequest(e)
	if err != nil {
		return fmt.Errorf("unity: creating %s: %w", e.Name, err)
	}
	if err := c.do(ctx, http.MethodPost, "/tables", req, nil); err != nil {
		return fmt.Errorf("unity: creating %s in %s: %w", e.Name, c.name, err)
	}
	return nil
}

// Update replaces the entry under e.Name. Unity Catalog's API has no call
// that changes a table's columns: the entry is deleted and created again
// (for an EXTERNAL table, deleting the entry leaves the data alone). Grants
// on the entry do not survive; ADR 0047 says why this is still the choice.
func (c *Catalog) Update(ctx context.Context, e catalog.Entry) error {
	if err := threeParts(e.Name); err != nil {
		return err
	}
	req, err := createRequest(e)
	if err != nil {
		return fmt.Errorf("unity: updating %s: %w", e.Name, err)
	}
	if err := c.do(ctx, http.MethodDelete, "/tables/"+url.PathEscape(e.Name.String()), nil, nil); err != nil && !isNotFound(err) {
		return fmt.Errorf("unity: updating %s in %s: dropping the old entry: %w", e.Name, c.name, err)
	}
	if err := c.do(ctx, http.MethodPost, "/tables", req, nil); err != nil {
		return fmt.Errorf("unity: updating %s in %s: creating the new entry: %w", e.Name, c.name, err)
	}
	return nil
}

// do sends one request and decodes the answer into out (nil: discard).
func (c *Catalog) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %w", catalog.ErrUnavailable, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return fmt.Errorf("%w: reading the answer: %w", catalog.ErrUnavailable, err)
	}
	if resp.StatusCode/100 != 2 {
		return apiError(resp.StatusCode, data)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("decoding the answer to %s %s: %w", method, path, err)
	}
	return nil
}
