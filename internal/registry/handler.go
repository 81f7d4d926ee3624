package registry

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
)

// contentType is what Confluent's registry answers with and its clients send.
const contentType = "application/vnd.schemaregistry.v1+json"

// maxBody bounds a request body; Debezium schemas are a few tens of KiB.
const maxBody = 8 << 20

// registerRequest is the body of a register or lookup call.
type registerRequest struct {
	Schema     string            `json:"schema"`
	SchemaType string            `json:"schemaType"`
	References []json.RawMessage `json:"references"`
	ID         int               `json:"id"`
	Version    int               `json:"version"`
}

func (r *Registry) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) { reply(w, struct{}{}) })
	mux.HandleFunc("GET /config", r.getConfig)
	mux.HandleFunc("GET /config/{subject}", r.getConfig)
	mux.HandleFunc("GET /schemas/types", func(w http.ResponseWriter, _ *http.Request) { reply(w, []string{"AVRO"}) })
	mux.HandleFunc("GET /schemas/ids/{id}", r.getSchema)
	mux.HandleFunc("GET /schemas/ids/{id}/schema", r.getSchemaText)
	mux.HandleFunc("GET /schemas/ids/{id}/versions", r.getSchemaVersions)
	mux.HandleFunc("GET /schemas/ids/{id}/subjects", r.getSchemaSubjects)
	mux.HandleFunc("GET /subjects", func(w http.ResponseWriter, _ *http.Request) { reply(w, r.Subjects()) })
	mux.HandleFunc("POST /subjects/{subject}", r.lookup)
	mux.HandleFunc("POST /subjects/{subject}/{$}", r.lookup)
	mux.HandleFunc("GET /subjects/{subject}/versions", r.getVersions)
	mux.HandleFunc("POST /subjects/{subject}/versions", r.register)
	mux.HandleFunc("GET /subjects/{subject}/versions/{version}", r.getVersion)
	mux.HandleFunc("GET /subjects/{subject}/versions/{version}/schema", r.getVersionText)
	return mux
}

func (r *Registry) getConfig(w http.ResponseWriter, _ *http.Request) {
	// NONE is what this registry enforces; claiming BACKWARD would promise
	// checks it does not make.
	reply(w, map[string]string{"compatibilityLevel": "NONE"})
}

func (r *Registry) getSchema(w http.ResponseWriter, req *http.Request) {
	id, ok := pathID(w, req)
	if !ok {
		return
	}
	text, err := r.SchemaByID(id)
	if err != nil {
		replyError(w, toAPIError(err))
		return
	}
	reply(w, map[string]string{"schema": text})
}

func (r *Registry) getSchemaText(w http.ResponseWriter, req *http.Request) {
	id, ok := pathID(w, req)
	if !ok {
		return
	}
	text, err := r.SchemaByID(id)
	if err != nil {
		replyError(w, toAPIError(err))
		return
	}
	replyRaw(w, text)
}

func (r *Registry) getSchemaVersions(w http.ResponseWriter, req *http.Request) {
	id, ok := pathID(w, req)
	if !ok {
		return
	}
	usages, err := r.Usages(id)
	if err != nil {
		replyError(w, toAPIError(err))
		return
	}
	type subjectVersion struct {
		Subject string `json:"subject"`
		Version int    `json:"version"`
	}
	out := make([]subjectVersion, len(usages))
	for i, u := range usages {
		out[i] = subjectVersion{Subject: u.Subject, Version: u.Version}
	}
	reply(w, out)
}

func (r *Registry) getSchemaSubjects(w http.ResponseWriter, req *http.Request) {
	id, ok := pathID(w, req)
	if !ok {
		return
	}
	usages, err := r.Usages(id)
	if err != nil {
		replyError(w, toAPIError(err))
		return
	}
	out := []string{}
	for _, u := range usages {
		if len(out) == 0 || out[len(out)-1] != u.Subject {
			out = append(out, u.Subject)
		}
	}
	reply(w, out)
}

func (r *Registry) getVersions(w http.ResponseWriter, req *http.Request) {
	vs, err := r.Versions(req.PathValue("subject"))
	if err != nil {
		replyError(w, toAPIError(err))
		return
	}
	reply(w, vs)
}

func (r *Registry) getVersion(w http.ResponseWriter, req *http.Request) {
	s, ok := r.subjectVersion(w, req)
	if ok {
		reply(w, s)
	}
}

func (r *Registry) getVersionText(w http.ResponseWriter, req *http.Request) {
	s, ok := r.subjectVersion(w, req)
	if ok {
		replyRaw(w, s.Schema)
	}
}

func (r *Registry) subjectVersion(w http.ResponseWriter, req *http.Request) (Subject, bool) {
	v, err := parseVersion(req.PathValue("version"))
	if err != nil {
		replyError(w, toAPIError(err))
		return Subject{}, false
	}
	s, err := r.Version(req.PathValue("subject"), v)
	if err != nil {
		replyError(w, toAPIError(err))
		return Subject{}, false
	}
	return s, true
}

func (r *Registry) register(w http.ResponseWriter, req *http.Request) {
	body, ok := readRequest(w, req)
	if !ok {
		return
	}
	s, err := r.Register(req.PathValue("subject"), body.Schema)
	if err != nil {
		replyError(w, toAPIError(err))
		return
	}
	if body.ID > 0 && body.ID != s.ID {
		// Import mode (a caller-chosen id) is not supported; say so rather
		// than hand back a different id than asked for.
		replyError(w, apiError{Code: codeIDDoesNotMatch, Message: fmt.Sprintf("registry: schema got id %d, fixed id %d is not supported", s.ID, body.ID)})
		return
	}
	reply(w, map[string]int{"id": s.ID})
}

func (r *Registry) lookup(w http.ResponseWriter, req *http.Request) {
	body, ok := readRequest(w, req)
	if !ok {
		return
	}
	s, err := r.Lookup(req.PathValue("subject"), body.Schema)
	if err != nil {
		replyError(w, toAPIError(err))
		return
	}
	reply(w, s)
}

// readRequest decodes a register/lookup body and refuses what this registry
// does not implement (non-Avro schemas, references).
func readRequest(w http.ResponseWriter, req *http.Request) (registerRequest, bool) {
	var body registerRequest
	b, err := io.ReadAll(http.MaxBytesReader(w, req.Body, maxBody))
	if err != nil {
		replyError(w, badRequest("reading request body: %v", err))
		return body, false
	}
	if err := json.Unmarshal(b, &body); err != nil {
		replyError(w, badRequest("parsing request body: %v", err))
		return body, false
	}
	if body.SchemaType != "" && body.SchemaType != "AVRO" {
		replyError(w, apiError{Code: codeInvalidSchema, Message: fmt.Sprintf("registry: schema type %q is not supported, only AVRO", body.SchemaType)})
		return body, false
	}
	if len(body.References) > 0 {
		replyError(w, apiError{Code: codeInvalidSchema, Message: "registry: schema references are not supported"})
		return body, false
	}
	return body, true
}

func pathID(w http.ResponseWriter, req *http.Request) (int, bool) {
	id, err := strconv.Atoi(req.PathValue("id"))
	if err != nil {
		replyError(w, apiError{Code: codeSchemaNotFound, Message: fmt.Sprintf("schema id %q: %v", req.PathValue("id"), ErrSchemaNotFound)})
		return 0, false
	}
	return id, true
}

// parseVersion accepts a positive version, -1 or "latest" (both meaning the
// newest).
func parseVersion(s string) (int, error) {
	if s == "latest" {
		return -1, nil
	}
	v, err := strconv.Atoi(s)
	if err != nil || v == 0 || v < -1 {
		return 0, fmt.Errorf("version %q: %w", s, ErrInvalidVersion)
	}
	return v, nil
}

func reply(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		replyError(w, apiError{Code: codeStore, Message: err.Error()})
		return
	}
	replyRaw(w, string(b))
}

func replyRaw(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", contentType)
	_, _ = io.WriteString(w, body) // the client is gone if this fails; nothing to do
}

func replyError(w http.ResponseWriter, e apiError) {
	b, _ := json.Marshal(e) // two plain fields cannot fail to encode
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(e.status())
	_, _ = w.Write(b) // the client is gone if this fails; nothing to do
}
