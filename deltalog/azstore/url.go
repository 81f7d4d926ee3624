package azstore

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/cdc2delta/cdc2delta/internal/urlcred"
)

// URLError reports a table URL that is not an Azure table URL, naming the
// part of it that is wrong.
type URLError struct {
	URL    string // the URL, any password masked
	Field  string // "scheme", "container", "account", "host", "query"
	Reason string
}

func (e *URLError) Error() string {
	return fmt.Sprintf("azstore: %q: %s: %s", e.URL, e.Field, e.Reason)
}

// Schemes are the URL schemes ParseURL accepts.
var Schemes = []string{"abfss", "abfs", "az", "azure", "https"}

// IsURL reports whether raw is meant for this store: its scheme is abfss,
// abfs, az or azure, or it is an https URL of a Blob or DFS endpoint.
func IsURL(raw string) bool {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return false
	}
	switch strings.ToLower(scheme) {
	case "abfss", "abfs", "az", "azure":
		return true
	case "https":
		host, _, _ := strings.Cut(rest, "/")
		return blobHost(host) != ""
	}
	return false
}

// ParseURL splits an Azure table URL into Options with Account, Container,
// Prefix and Endpoint set; the caller fills in the rest. The forms:
//
//	abfss://container@account.dfs.core.windows.net/path  (ADLS Gen2; abfs too)
//	abfss://workspace@onelake.dfs.fabric.microsoft.com/lakehouse.Lakehouse/Tables/t  (OneLake)
//	https://account.blob.core.windows.net/container/path  (or .dfs.)
//	az://container/path  (azure:// too; the account comes from the configuration)
//
// A DFS host is reached at the Blob host of the same account. az:// leaves
// Account and Endpoint empty.
func ParseURL(raw string) (Options, error) {
	// Errors quote the URL with any password masked and without its query,
	// which may be a SAS token.
	shown, _, _ := strings.Cut(urlcred.Redact(raw), "?")
	bad := func(field, format string, args ...any) (Options, error) {
		return Options{}, &URLError{URL: shown, Field: field, Reason: fmt.Sprintf(format, args...)}
	}
	u, err := url.Parse(raw)
	if err != nil {
		return bad("url", "%v", errors.Unwrap(err)) // *url.Error repeats raw
	}
	if u.RawQuery != "" || u.Fragment != "" {
		// A SAS token belongs in the configuration, where it is masked.
		return bad("query", "a table URL has no query or fragment (a SAS token goes in storage.azure.sas_token)")
	}
	if _, hasPassword := u.User.Password(); hasPassword {
		return bad("credentials", "a table URL carries no credentials; they come from storage.azure.* or the environment")
	}
	var o Options
	path := strings.Trim(u.Path, "/")
	switch strings.ToLower(u.Scheme) {
	case "abfss", "abfs":
		if u.User == nil || u.User.Username() == "" {
			return bad("container", "missing: the form is abfss://container@account.dfs.core.windows.net/path")
		}
		o.Container = u.User.Username()
		host := blobHost(u.Host)
		if host == "" {
			return bad("host", "%q is not an Azure DFS or Blob host (account.dfs.core.windows.net, onelake.dfs.fabric.microsoft.com)", u.Host)
		}
		o.Account, _, _ = strings.Cut(host, ".")
		o.Endpoint = "https://" + host
		o.Prefix = path
	case "az", "azure":
		if u.User != nil {
			return bad("container", "az://container/path names the container as the host, with no @")
		}
		if u.Host == "" {
			return bad("container", "missing: the form is az://container/path")
		}
		o.Container, o.Prefix = u.Host, path
	case "https":
		host := blobHost(u.Host)
		if host == "" {
			return bad("host", "%q is not an Azure Blob or DFS host (account.blob.core.windows.net)", u.Host)
		}
		if u.User != nil {
			return bad("credentials", "a table URL carries no credentials")
		}
		o.Account, _, _ = strings.Cut(host, ".")
		o.Endpoint = "https://" + host
		o.Container, o.Prefix, _ = strings.Cut(path, "/")
		if o.Container == "" {
			return bad("container", "missing: the form is https://account.blob.core.windows.net/container/path")
		}
	default:
		return bad("scheme", "%q is not one of %s", u.Scheme, strings.Join(Schemes, ", "))
	}
	check := checkContainer
	if o.Account == "onelake" {
		check = checkWorkspace
	}
	if err := check(o.Container); err != "" {
		return bad("container", "%q %s", o.Container, err)
	}
	if o.Account != "" && o.Account != "onelake" && !validAccount(o.Account) {
		return bad("account", "%q is not a storage account name (3 to 24 lowercase letters and digits)", o.Account)
	}
	return o, nil
}

// blobHost returns the Blob host of an Azure Blob or DFS host
// ("acct.dfs.core.windows.net" -> "acct.blob.core.windows.net"), or "" when
// host is neither. Sovereign clouds (core.chinacloudapi.cn, ...) and
// OneLake (onelake.dfs.fabric.microsoft.com) have the same shape.
func blobHost(host string) string {
	host = strings.ToLower(host)
	account, rest, ok := strings.Cut(host, ".")
	if !ok || account == "" || strings.Contains(rest, ":") {
		return ""
	}
	service, suffix, ok := strings.Cut(rest, ".")
	if !ok || !strings.Contains(suffix, ".") || (service != "blob" && service != "dfs") {
		return ""
	}
	return account + ".blob." + suffix
}

// checkContainer says what is wrong with a Blob container name, or "": 3 to
// 63 lowercase letters, digits and single hyphens, starting and ending with
// a letter or digit (Azure answers a bad name with a 400 that names
// nothing), or one of the service's $ containers.
func checkContainer(c string) string {
	switch c {
	case "$root", "$web", "$logs":
		return ""
	}
	if n := len(c); n < 3 || n > 63 {
		return "is not a container name: 3 to 63 characters"
	}
	for i, r := range c {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
		case r == '-' && i > 0 && i < len(c)-1 && c[i-1] != '-':
		default:
			return "is not a container name: lowercase letters, digits and single hyphens, starting and ending with a letter or digit"
		}
	}
	return ""
}

// checkWorkspace says what is wrong with a OneLake workspace name, or "".
// Workspaces may be named with capitals and spaces, so only what no
// workspace allows is refused.
func checkWorkspace(c string) string {
	switch {
	case c == "":
		return "is empty"
	case strings.ContainsAny(c, "/\\?#"):
		return "has a character a workspace name cannot have"
	}
	return ""
}

func validAccount(a string) bool {
	if len(a) < 3 || len(a) > 24 {
		return false
	}
	for _, r := range a {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') {
			return false
		}
	}
	return true
}
