package config

import (
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Catalog types (catalog.type).
const (
	CatalogUnity = "unity"
	CatalogGlue  = "glue"
	CatalogHive  = "hive"
)

// defaultCatalogName is the name template of a table in a catalog.
const defaultCatalogName = "{database}.{schema}.{table}"

// DefaultCatalog is the name of the catalog: block, the catalog of every
// table whose settings name none.
const DefaultCatalog = "default"

// catalogKeyRE is what a key of catalogs: may be.
var catalogKeyRE = regexp.MustCompile(`^[a-z][a-z0-9_-]*$`)

// NamedCatalog is one configured catalog and its name.
type NamedCatalog struct {
	Name string
	Catalog
}

// EnabledCatalogs are the catalogs tables are registered in: the catalog:
// block as "default" when it has a type, then catalogs: by name.
func (c Config) EnabledCatalogs() []NamedCatalog {
	var out []NamedCatalog
	if c.Catalog.Enabled() {
		out = append(out, NamedCatalog{DefaultCatalog, c.Catalog})
	}
	for _, name := range slices.Sorted(maps.Keys(c.Catalogs)) {
		if k := c.Catalogs[name]; k.Enabled() {
			out = append(out, NamedCatalog{name, k})
		}
	}
	return out
}

// CatalogOf is the name of the catalog src is registered in
// (tables.defaults.catalog and tables.overrides[].catalog), or false when
// it names none that is enabled.
func (c Config) CatalogOf(src Source) (string, bool) {
	name := c.Tables.Settings(src).Catalog
	if name == "" || name == DefaultCatalog {
		return DefaultCatalog, c.Catalog.Enabled()
	}
	return name, c.Catalogs[name].Enabled()
}

// Catalog registers the tables in a metastore so that engines find them by
// name (ADR 0047). Without a type, no table is registered.
type Catalog struct {
	// Type is unity, glue or hive.
	Type string `yaml:"type"`
	// Endpoint is Unity Catalog's server URL (https://host:port, the REST
	// API under /api/2.1/unity-catalog), or an endpoint override for Glue.
	Endpoint string `yaml:"endpoint"`
	// Token is Unity Catalog's bearer token; TokenFile reads it from a file
	// (a mounted secret) instead.
	Token     Secret `yaml:"token"`
	TokenFile string `yaml:"token_file"`
	// Region, CatalogID (the AWS account) and static credentials for Glue;
	// without AccessKeyID the AWS default chain is used.
	Region              string `yaml:"region"`
	CatalogID           string `yaml:"catalog_id"`
	AccessKeyID         string `yaml:"access_key_id"`
	SecretAccessKey     Secret `yaml:"secret_access_key"`
	SecretAccessKeyFile string `yaml:"secret_access_key_file"`
	// URIs are a Hive Metastore's thrift://host:port addresses.
	URIs []string `yaml:"uris"`
	// Name is the name template: "{database}.{schema}.{table}" gives
	// catalog.schema.table (three parts for unity, two for glue and hive);
	// the placeholders are those of tables.path, and {topic}.
	Name string `yaml:"name"`
	// ControlName is the control table's name (empty: not registered).
	ControlName string `yaml:"control_name"`
	// RequestTimeout bounds each call to the catalog (default 30s); a
	// catalog that does not answer within it is retried.
	RequestTimeout Duration `yaml:"request_timeout"`
	// Overrides give matching tables another name, or none.
	Overrides []CatalogOverride `yaml:"overrides"`
}

// CatalogOverride names the tables it matches (by Topic, or by Table as
// "schema.table" or "database.schema.table", as tables.overrides do).
type CatalogOverride struct {
	Topic string `yaml:"topic"`
	Table string `yaml:"table"`
	// Name is the table's name in the catalog (no placeholders needed).
	Name string `yaml:"name"`
	// Skip leaves the table unregistered.
	Skip bool `yaml:"skip"`
}

// Enabled reports whether tables are registered.
func (c Catalog) Enabled() bool { return c.Type != "" }

// Parts is how many parts a name has in the catalog's type.
func (c Catalog) Parts() int {
	if c.Type == CatalogUnity {
		return 3
	}
	return 2
}

// TableName is src's name in the catalog, split into its parts, or false
// when the table is not registered.
func (c Catalog) TableName(src Source) ([]string, bool) {
	tmpl := c.Name
	if tmpl == "" {
		tmpl = defaultCatalogName
	}
	for _, o := range c.Overrides {
		if (TableOverride{Topic: o.Topic, Name: o.Table}).matches(src) {
			if o.Skip {
				return nil, false
			}
			tmpl = o.Name
		}
	}
	r := strings.NewReplacer("{topic}", src.Topic, "{database}", src.Database, "{schema}", src.Schema, "{table}", src.Table)
	return strings.Split(r.Replace(tmpl), "."), true
}

func (c *Config) validateCatalog(p *problems) {
	validateCatalog(p, "catalog", c.Catalog)
	for _, name := range slices.Sorted(maps.Keys(c.Catalogs)) {
		at := "catalogs." + name
		switch {
		case name == DefaultCatalog:
			p.add(at, "%q is the catalog: block's name; give this catalog another", name)
		case !catalogKeyRE.MatchString(name):
			p.add(at, "%q: a catalog's name is lower-case letters, digits, _ and -, starting with a letter", name)
		}
		if c.Catalogs[name].Type == "" {
			p.add(at+".type", "must be unity, glue or hive")
		}
		validateCatalog(p, at, c.Catalogs[name])
	}
	known := func() string {
		names := append([]string{DefaultCatalog}, slices.Sorted(maps.Keys(c.Catalogs))...)
		return "the catalogs are " + strings.Join(names, ", ")
	}
	check := func(path, name string) {
		if name == "" || name == DefaultCatalog {
			return
		}
		if _, ok := c.Catalogs[name]; !ok {
			p.add(path, "unknown catalog %q: %s", name, known())
		}
	}
	check("tables.defaults.catalog", c.Tables.Defaults.Catalog)
	for i, o := range c.Tables.Overrides {
		if o.Catalog != nil {
			check(fmt.Sprintf("tables.overrides[%d].catalog", i), *o.Catalog)
		}
	}
}

// validateCatalog checks one catalog block; at is its path ("catalog",
// "catalogs.NAME").
func validateCatalog(p *problems, at string, k Catalog) {
	if k.Type == "" {
		return
	}
	p.oneOf(at+".type", k.Type, CatalogUnity, CatalogGlue, CatalogHive)
	checkName := func(path, tmpl string, placeholders bool) {
		parts := strings.Split(tmpl, ".")
		if len(parts) != k.Parts() {
			p.add(path, "%q has %d parts; a %s catalog names tables with %d (%s)", tmpl, len(parts), k.Type, k.Parts(),
				map[int]string{2: "database.table", 3: "catalog.schema.table"}[k.Parts()])
			return
		}
		for _, part := range parts {
			if part == "" {
				p.add(path, "%q has an empty part", tmpl)
				return
			}
		}
		if !placeholders && strings.ContainsAny(tmpl, "{}") {
			p.add(path, "%q: placeholders are for %s.name; an override names one table", tmpl, at)
		}
		for _, ph := range placeholderRE.FindAllString(tmpl, -1) {
			if ph != "{topic}" && ph != "{database}" && ph != "{schema}" && ph != "{table}" {
				p.add(path, "%q: unknown placeholder %s; use {topic}, {database}, {schema} or {table}", tmpl, ph)
			}
		}
	}
	name := k.Name
	if name == "" {
		name = defaultCatalogName
		if k.Parts() == 2 {
			p.add(at+".name", "must be set for a %s catalog (two parts, such as \"{schema}.{table}\"); the default %q has three", k.Type, defaultCatalogName)
		}
	} else {
		checkName(at+".name", name, true)
	}
	if k.ControlName != "" {
		checkName(at+".control_name", k.ControlName, false)
	}
	for i, o := range k.Overrides {
		path := fmt.Sprintf("%s.overrides[%d]", at, i)
		if (o.Topic == "") == (o.Table == "") {
			p.add(path, "set topic or table (schema.table or database.schema.table), one of them")
		}
		switch {
		case o.Skip && o.Name != "":
			p.add(path+".name", "set name or skip, not both")
		case !o.Skip && o.Name == "":
			p.add(path+".name", "must be set (the table's name in the catalog), or skip: true")
		case !o.Skip:
			checkName(path+".name", o.Name, false)
		}
	}
	if k.RequestTimeout < 0 || k.RequestTimeout > Duration(10*time.Minute) {
		p.add(at+".request_timeout", "must be from 0 (default 30s) to 10m, got %s", k.RequestTimeout)
	}
	switch k.Type {
	case CatalogUnity:
		if u, err := url.Parse(k.Endpoint); k.Endpoint == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			p.add(at+".endpoint", "must be the Unity Catalog server's http(s)://host[:port], got %q", k.Endpoint)
		}
		if k.Token != "" && k.TokenFile != "" {
			p.add(at+".token_file", "set token or token_file, not both")
		}
	case CatalogGlue:
		if k.Endpoint != "" {
			if u, err := url.Parse(k.Endpoint); err != nil || u.Host == "" {
				p.add(at+".endpoint", "must be a URL such as https://glue.eu-west-1.amazonaws.com, got %q", k.Endpoint)
			}
		}
		if k.SecretAccessKey != "" && k.SecretAccessKeyFile != "" {
			p.add(at+".secret_access_key_file", "set secret_access_key or secret_access_key_file, not both")
		}
		if k.AccessKeyID != "" && k.SecretAccessKey == "" && k.SecretAccessKeyFile == "" {
			p.add(at+".secret_access_key", "must be set with access_key_id")
		}
	case CatalogHive:
		if len(k.URIs) == 0 {
			p.add(at+".uris", "must list the metastore's thrift://host:port addresses")
		}
		for i, s := range k.URIs {
			if u, err := url.Parse(s); err != nil || u.Scheme != "thrift" || u.Port() == "" {
				p.add(fmt.Sprintf("%s.uris[%d]", at, i), "must be thrift://host:port, got %q", s)
			}
		}
	}
}
