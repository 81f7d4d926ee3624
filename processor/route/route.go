// Package route maps a Kafka topic to the Delta table it feeds: the source
// database, schema and table its name carries, and the table path the
// tables.path template makes of them.
package route

import (
	"errors"
	"fmt"
	"strings"
)

// DefaultTablePath is the table path template used when Options.TablePath is
// empty: one directory per source table, grouped by database and schema.
const DefaultTablePath = "{database}/{schema}/{table}"

// ErrRoute reports a topic that the table path template cannot name.
var ErrRoute = errors.New("route: cannot route topic")

// Router maps a Kafka topic to the path of its Delta table.
//
// Debezium's SQL Server connector names topics
// <topic.prefix>.<database>.<schema>.<table>; the last three dot-separated
// parts fill {database}, {schema} and {table}, and the whole name fills
// {topic}. Routing by topic name (not by the record's source block) lets a
// partition be mapped to its table at assignment time, before any of its
// records has been read, which is when the Delta txn must be looked up.
type Router struct {
	template string
	parts    bool // template uses {database}, {schema} or {table}
}

// NewRouter returns a Router for template, which must contain at least one
// placeholder so that different topics get different tables.
func NewRouter(template string) (*Router, error) {
	if template == "" {
		template = DefaultTablePath
	}
	parts := false
	for _, p := range []string{"{database}", "{schema}", "{table}"} {
		if strings.Contains(template, p) {
			parts = true
		}
	}
	if !parts && !strings.Contains(template, "{topic}") {
		return nil, fmt.Errorf("%w: template %q has no {topic}, {database}, {schema} or {table}", ErrRoute, template)
	}
	if rest := stripPlaceholders(template); strings.ContainsAny(rest, "{}") {
		return nil, fmt.Errorf("%w: template %q has an unknown placeholder", ErrRoute, template)
	}
	return &Router{template: template, parts: parts}, nil
}

// TableSource names the table a topic routes to: the topic, the source
// database, schema and table read from its name (empty when the topic has
// fewer than three dot-separated parts and the template does not need them),
// and the Delta table path.
type TableSource struct {
	Topic, Database, Schema, Table string
	Path                           string
}

// Route returns the table path for topic.
func (r *Router) Route(topic string) (string, error) {
	src, err := r.Source(topic)
	return src.Path, err
}

// Source returns the table topic routes to and the source names it carries.
func (r *Router) Source(topic string) (TableSource, error) {
	if topic == "" {
		return TableSource{}, fmt.Errorf("%w: empty topic name", ErrRoute)
	}
	src := ParseTopic(topic)
	if r.parts {
		if src.Table == "" && src.Schema == "" && src.Database == "" {
			return TableSource{}, fmt.Errorf("%w %q: template %q needs a topic named <prefix>.<database>.<schema>.<table>", ErrRoute, topic, r.template)
		}
		if src.Database == "" || src.Schema == "" || src.Table == "" {
			return TableSource{}, fmt.Errorf("%w %q: empty database, schema or table part", ErrRoute, topic)
		}
	}
	src.Path = strings.NewReplacer(
		"{topic}", topic,
		"{database}", src.Database,
		"{schema}", src.Schema,
		"{table}", src.Table,
	).Replace(r.template)
	return src, nil
}

// ParseTopic names the source table of a Debezium topic
// (<prefix>.<database>.<schema>.<table>): the last three dot-separated parts;
// the names stay empty for a topic with fewer parts. Path is left empty.
func ParseTopic(topic string) TableSource {
	src := TableSource{Topic: topic}
	if f := strings.Split(topic, "."); len(f) >= 3 {
		src.Database, src.Schema, src.Table = f[len(f)-3], f[len(f)-2], f[len(f)-1]
	}
	return src
}

func stripPlaceholders(s string) string {
	return strings.NewReplacer("{topic}", "", "{database}", "", "{schema}", "", "{table}", "").Replace(s)
}
