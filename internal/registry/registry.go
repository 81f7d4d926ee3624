package registry

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"sync"

	"github.com/linkedin/goavro/v2"
)

// Registry holds schemas by global id and subject versions. It is safe for
// concurrent use. The zero value is not usable; call [New].
type Registry struct {
	logger  *slog.Logger
	file    string // state file; empty keeps everything in memory
	handler http.Handler

	mu struct {
		sync.RWMutex
		schemas  []string         // schema text by id-1
		subjects map[string][]int // subject → schema id by version-1
		byText   map[string]int   // compact schema text → id
	}

	srv struct {
		sync.Mutex
		server *http.Server
		ln     net.Listener
		done   chan struct{}
	}
}

// Opt configures a [Registry].
type Opt func(*Registry)

// Dir keeps the registry's state in dir/registry.json, loading it on [New]
// and rewriting it after every new registration. The directory is created
// if it does not exist.
func Dir(dir string) Opt {
	return func(r *Registry) { r.file = stateFile(dir) }
}

// WithLogger sets the logger; the default discards.
func WithLogger(l *slog.Logger) Opt {
	return func(r *Registry) { r.logger = l }
}

// New returns an empty registry, or the one persisted under [Dir].
func New(opts ...Opt) (*Registry, error) {
	r := &Registry{logger: slog.New(slog.DiscardHandler)}
	for _, o := range opts {
		o(r)
	}
	r.mu.subjects = map[string][]int{}
	r.mu.byText = map[string]int{}
	if r.file != "" {
		if err := r.load(); err != nil {
			return nil, err
		}
	}
	r.handler = r.routes()
	return r, nil
}

// Handler returns the HTTP handler serving the REST API, for use with
// httptest.NewServer or a caller-owned server.
func (r *Registry) Handler() http.Handler { return r.handler }

// Subject is one version of a schema under a subject.
type Subject struct {
	Subject string `json:"subject"`
	Version int    `json:"version"`
	ID      int    `json:"id"`
	Schema  string `json:"schema"`
}

// Register stores schema under subject and returns its global id and the
// subject version. Registering a schema a subject already has returns the
// existing version; a schema known under another subject keeps its id.
func (r *Registry) Register(subject, schema string) (Subject, error) {
	text, err := normalize(schema)
	if err != nil {
		return Subject{}, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()

	id, known := r.mu.byText[text]
	if known {
		for v, vid := range r.mu.subjects[subject] {
			if vid == id {
				return Subject{Subject: subject, Version: v + 1, ID: id, Schema: text}, nil
			}
		}
	} else {
		id = len(r.mu.schemas) + 1
		r.mu.schemas = append(r.mu.schemas, text)
		r.mu.byText[text] = id
	}
	r.mu.subjects[subject] = append(r.mu.subjects[subject], id)
	version := len(r.mu.subjects[subject])
	if err := r.saveLocked(); err != nil {
		// Undo, so memory never holds what the file does not.
		r.mu.subjects[subject] = r.mu.subjects[subject][:version-1]
		if len(r.mu.subjects[subject]) == 0 {
			delete(r.mu.subjects, subject)
		}
		if !known {
			r.mu.schemas = r.mu.schemas[:id-1]
			delete(r.mu.byText, text)
		}
		return Subject{}, err
	}
	r.logger.Debug("schema registered", "subject", subject, "id", id, "version", version)
	return Subject{Subject: subject, Version: version, ID: id, Schema: text}, nil
}

// SchemaByID returns the text of schema id.
func (r *Registry) SchemaByID(id int) (string, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if id < 1 || id > len(r.mu.schemas) {
		return "", fmt.Errorf("schema id %d: %w", id, ErrSchemaNotFound)
	}
	return r.mu.schemas[id-1], nil
}

// Lookup returns the version of subject that holds schema.
func (r *Registry) Lookup(subject, schema string) (Subject, error) {
	text, err := normalize(schema)
	if err != nil {
		return Subject{}, err
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	ids, ok := r.mu.subjects[subject]
	if !ok {
		return Subject{}, fmt.Errorf("subject %q: %w", subject, ErrSubjectNotFound)
	}
	id := r.mu.byText[text]
	for v, vid := range ids {
		if vid == id {
			return Subject{Subject: subject, Version: v + 1, ID: id, Schema: text}, nil
		}
	}
	return Subject{}, fmt.Errorf("schema under subject %q: %w", subject, ErrSchemaNotFound)
}

// Version returns version v of subject; v == -1 means the latest.
func (r *Registry) Version(subject string, v int) (Subject, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	ids, ok := r.mu.subjects[subject]
	if !ok {
		return Subject{}, fmt.Errorf("subject %q: %w", subject, ErrSubjectNotFound)
	}
	if v == -1 {
		v = len(ids)
	}
	if v < 1 || v > len(ids) {
		return Subject{}, fmt.Errorf("subject %q version %d: %w", subject, v, ErrVersionNotFound)
	}
	id := ids[v-1]
	return Subject{Subject: subject, Version: v, ID: id, Schema: r.mu.schemas[id-1]}, nil
}

// Versions returns the versions of subject, ascending.
func (r *Registry) Versions(subject string) ([]int, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	ids, ok := r.mu.subjects[subject]
	if !ok {
		return nil, fmt.Errorf("subject %q: %w", subject, ErrSubjectNotFound)
	}
	vs := make([]int, len(ids))
	for i := range ids {
		vs[i] = i + 1
	}
	return vs, nil
}

// Subjects returns every subject, sorted.
func (r *Registry) Subjects() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.mu.subjects))
	for s := range r.mu.subjects {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// Usages returns every subject version that holds schema id.
func (r *Registry) Usages(id int) ([]Subject, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if id < 1 || id > len(r.mu.schemas) {
		return nil, fmt.Errorf("schema id %d: %w", id, ErrSchemaNotFound)
	}
	var out []Subject
	for s, ids := range r.mu.subjects {
		for v, vid := range ids {
			if vid == id {
				out = append(out, Subject{Subject: s, Version: v + 1, ID: id, Schema: r.mu.schemas[id-1]})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Subject != out[j].Subject {
			return out[i].Subject < out[j].Subject
		}
		return out[i].Version < out[j].Version
	})
	return out, nil
}

// normalize checks that schema is Avro and returns its compact JSON text,
// which is what identity is decided on.
func normalize(schema string) (string, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(schema)); err != nil {
		return "", fmt.Errorf("%w: %v", ErrInvalidSchema, err)
	}
	if _, err := goavro.NewCodec(buf.String()); err != nil {
		return "", fmt.Errorf("%w: %v", ErrInvalidSchema, err)
	}
	return buf.String(), nil
}
