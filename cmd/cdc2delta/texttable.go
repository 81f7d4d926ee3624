package main

import (
	"io"
	"strings"
	"unicode/utf8"
)

// textTable aligns rows in columns for humans. The last column is not padded, so long
// values (metrics) do not push trailing spaces.
type textTable struct {
	rows [][]string
}

func newTextTable(header ...string) *textTable {
	return &textTable{rows: [][]string{header}}
}

func (t *textTable) add(cells ...string) { t.rows = append(t.rows, cells) }

func (t *textTable) write(w io.Writer) error {
	widths := make([]int, len(t.rows[0]))
	for _, r := range t.rows {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	var b strings.Builder
	for _, r := range t.rows {
		for i, c := range r {
			b.WriteString(c)
			if i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)+2))
			}
		}
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}
