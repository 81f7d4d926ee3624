package registry

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// snapshot is the registry's state file: schemas in id order, and each
// subject's schema ids in version order.
type snapshot struct {
	Schemas  []string         `json:"schemas"`
	Subjects map[string][]int `json:"subjects"`
}

func stateFile(dir string) string { return filepath.Join(dir, "registry.json") }

// load reads the state file if it exists.
func (r *Registry) load() error {
	if err := os.MkdirAll(filepath.Dir(r.file), 0o755); err != nil {
		return fmt.Errorf("creating registry directory: %w", err)
	}
	b, err := os.ReadFile(r.file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading registry state: %w", err)
	}
	var s snapshot
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("parsing registry state %s: %w", r.file, err)
	}
	for i, text := range s.Schemas {
		r.mu.byText[text] = i + 1
	}
	for subject, ids := range s.Subjects {
		for _, id := range ids {
			if id < 1 || id > len(s.Schemas) {
				return fmt.Errorf("parsing registry state %s: subject %q refers to unknown id %d", r.file, subject, id)
			}
		}
		r.mu.subjects[subject] = ids
	}
	r.mu.schemas = s.Schemas
	return nil
}

// saveLocked rewrites the state file atomically (write, sync, rename), so a
// crash leaves either the old or the new state. Callers hold r.mu.
func (r *Registry) saveLocked() error {
	if r.file == "" {
		return nil
	}
	b, err := json.Marshal(snapshot{Schemas: r.mu.schemas, Subjects: r.mu.subjects})
	if err != nil {
		return fmt.Errorf("encoding registry state: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(r.file), ".registry-*.json")
	if err != nil {
		return fmt.Errorf("saving registry state: %w", err)
	}
	defer os.Remove(tmp.Name()) // a no-op after the rename succeeded
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("saving registry state: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("saving registry state: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("saving registry state: %w", err)
	}
	if err := os.Rename(tmp.Name(), r.file); err != nil {
		return fmt.Errorf("saving registry state: %w", err)
	}
	return nil
}
