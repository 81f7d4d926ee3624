package config

import (
	"net/url"

	"github.com/cdc2delta/cdc2delta/internal/urlcred"
)

// validateGCS checks storage.gcs. The key file is only named here: its content is
// read by the store, and never shown.
func (c *Config) validateGCS(p *problems) {
	g := c.Storage.GCS
	if e := g.Endpoint; e != "" {
		if u, err := url.Parse(e); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			p.add("storage.gcs.endpoint", "%q is not an http:// or https:// URL", urlcred.Redact(e))
		} else if msg := urlPortProblem(u); msg != "" {
			p.add("storage.gcs.endpoint", "%q: %s", urlcred.Redact(e), msg)
		} else if u.User != nil {
			p.add("storage.gcs.endpoint", "%q carries credentials; GCS credentials come from storage.gcs.credentials_file or the application default credentials", urlcred.Redact(e))
		}
	}
	if g.RequestTimeout < 0 {
		p.add("storage.gcs.request_timeout", "must not be negative, got %s", g.RequestTimeout)
	}
}
