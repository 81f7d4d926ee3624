package config

import (
	"net/url"
	"strings"

	"github.com/cdc2delta/cdc2delta/internal/urlcred"
)

// abfs reports whether path is an abfs:// or abfss:// URL, whose
// container@account is a location, not a user's credentials.
func abfs(path string) bool {
	scheme, _, _ := strings.Cut(strings.ToLower(path), "://")
	return scheme == "abfss" || scheme == "abfs"
}

func (c *Config) validateAzure(p *problems) {
	a := c.Storage.Azure
	if e := a.Endpoint; e != "" {
		u, err := url.Parse(e)
		switch {
		case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
			p.add("storage.azure.endpoint", "%q is not an http:// or https:// URL", urlcred.Redact(e))
		case urlPortProblem(u) != "":
			p.add("storage.azure.endpoint", "%q: %s", urlcred.Redact(e), urlPortProblem(u))
		case u.User != nil:
			p.add("storage.azure.endpoint", "%q carries credentials; they go in storage.azure.account_key or sas_token", urlcred.Redact(e))
		case u.RawQuery != "":
			p.add("storage.azure.endpoint", "%q has a query; a SAS token goes in storage.azure.sas_token", u.Scheme+"://"+u.Host+u.Path)
		}
	}
	if a.ClientSecret != "" && (a.TenantID == "" || a.ClientID == "") {
		p.add("storage.azure.client_secret", "needs storage.azure.tenant_id and storage.azure.client_id")
	}
	if a.RequestTimeout < 0 {
		p.add("storage.azure.request_timeout", "must not be negative, got %s", a.RequestTimeout)
	}
}
