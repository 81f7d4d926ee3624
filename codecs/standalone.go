package codecs

import (
	"encoding/json"
	"strings"

	"github.com/linkedin/goavro/v2"
)

// standaloneCodec compiles a goavro codec for one field's type, inlining
// named types defined elsewhere in the envelope (after: ["null","Value"]).
func standaloneCodec(t any, ns string, names map[string]map[string]any) (*goavro.Codec, error) {
	st := standalone(t, ns, names, map[string]bool{})
	text, err := json.Marshal(st)
	if err != nil {
		return nil, err
	}
	return goavro.NewCodec(string(text))
}

func standalone(node any, ns string, names map[string]map[string]any, emitted map[string]bool) any {
	switch n := node.(type) {
	case string:
		if primitiveSkip(n) != nil {
			return n
		}
		full := n
		if !strings.Contains(n, ".") && ns != "" {
			full = ns + "." + n
		}
		def := names[full]
		if def == nil {
			full, def = n, names[n]
		}
		if def == nil || emitted[full] {
			return full
		}
		return standaloneNamed(full, def, names, emitted)
	case []any:
		out := make([]any, len(n))
		for i, b := range n {
			out[i] = standalone(b, ns, names, emitted)
		}
		return out
	case map[string]any:
		switch n["type"] {
		case "record", "enum", "fixed":
			name, _ := n["name"].(string)
			full := name
			if !strings.Contains(name, ".") {
				if s, ok := n["namespace"].(string); ok {
					ns = s
				}
				if ns != "" {
					full = ns + "." + name
				}
			}
			if emitted[full] {
				return full
			}
			return standaloneNamed(full, n, names, emitted)
		}
		out := make(map[string]any, len(n))
		for k, v := range n {
			out[k] = v
		}
		for _, k := range []string{"items", "values", "type"} {
			if v, ok := n[k]; ok {
				if _, prim := v.(string); !prim || k != "type" {
					out[k] = standalone(v, ns, names, emitted)
				}
			}
		}
		return out
	}
	return node
}

func standaloneNamed(full string, def map[string]any, names map[string]map[string]any, emitted map[string]bool) any {
	emitted[full] = true
	ns := ""
	if i := strings.LastIndexByte(full, '.'); i >= 0 {
		ns = full[:i]
	}
	out := make(map[string]any, len(def))
	for k, v := range def {
		out[k] = v
	}
	out["name"] = full
	delete(out, "namespace")
	if fields, ok := def["fields"].([]any); ok {
		nf := make([]any, len(fields))
		for i, f := range fields {
			fm, _ := f.(map[string]any)
			cp := make(map[string]any, len(fm))
			for k, v := range fm {
				cp[k] = v
			}
			cp["type"] = standalone(fm["type"], ns, names, emitted)
			nf[i] = cp
		}
		out["fields"] = nf
	}
	return out
}
