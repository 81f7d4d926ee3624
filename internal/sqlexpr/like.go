package sqlexpr

import (
	"strings"
	"unicode/utf8"
)

// likePattern is a compiled LIKE pattern: literal runs, '_' (one character) and '%'
// (any characters).
type likePattern struct {
	parts []likePart
	fold  bool
}

type likePart struct {
	kind byte // 'l' literal, '_' one character, '%' any
	text string
}

// compileLike compiles a pattern with Spark's rules: the escape character may only
// precede '_', '%' or itself.
func compileLike(p string, esc rune, fold bool) (*likePattern, *Error) {
	lp := &likePattern{fold: fold}
	if fold {
		for i := 0; i < len(p); i++ {
			if p[i] >= utf8.RuneSelf {
				return nil, errAt(ErrUnsupported, 0, "ILIKE with non-ASCII patterns is not supported")
			}
		}
		p = strings.ToLower(p)
	}
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			lp.parts = append(lp.parts, likePart{kind: 'l', text: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(p); {
		r, size := utf8.DecodeRuneInString(p[i:])
		i += size
		switch {
		case r == esc:
			if i >= len(p) {
				return nil, errAt(ErrType, 0, "the LIKE pattern %s ends with its escape character", quote(p))
			}
			n, size := utf8.DecodeRuneInString(p[i:])
			if n != '_' && n != '%' && n != esc {
				return nil, errAt(ErrType, 0, "in the LIKE pattern %s the escape character precedes %q: it may only precede _, %% or itself", quote(p), n)
			}
			i += size
			lit.WriteRune(n)
		case r == '_' || r == '%':
			flush()
			if r == '%' && len(lp.parts) > 0 && lp.parts[len(lp.parts)-1].kind == '%' {
				continue
			}
			lp.parts = append(lp.parts, likePart{kind: byte(r)})
		default:
			lit.WriteRune(r)
		}
	}
	flush()
	return lp, nil
}

func (lp *likePattern) match(s string) (any, error) {
	if lp.fold {
		for i := 0; i < len(s); i++ {
			if s[i] >= utf8.RuneSelf {
				return nil, failf("ILIKE of non-ASCII text is not supported (Java's case mapping differs from Go's)")
			}
		}
		s = strings.ToLower(s)
	}
	return matchParts(lp.parts, s), nil
}

// matchParts matches greedily with backtracking on '%' (at most one active
// backtrack point, as in glob matching), in O(len(s)·parts).
func matchParts(parts []likePart, s string) bool {
	pi, si := 0, 0
	starP, starS := -1, 0
	for {
		if pi < len(parts) {
			switch p := parts[pi]; p.kind {
			case '%':
				starP, starS = pi, si
				pi++
				continue
			case '_':
				if si < len(s) {
					_, size := utf8.DecodeRuneInString(s[si:])
					pi, si = pi+1, si+size
					continue
				}
			default:
				if strings.HasPrefix(s[si:], p.text) {
					pi, si = pi+1, si+len(p.text)
					continue
				}
			}
		} else if si == len(s) {
			return true
		}
		if starP < 0 || starS >= len(s) {
			return false
		}
		_, size := utf8.DecodeRuneInString(s[starS:])
		starS += size
		pi, si = starP+1, starS
	}
}
