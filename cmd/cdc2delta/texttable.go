package main

import (
	"io"
	"strings"
	"unicode/utf8"
)

// textTable aligns rows in columns for humans. The last column is not padded, so long
// values (metrics) do not push trailing spaces. A cell may span several lines
// (addLines); the row's other cells are blank on its continuation lines.
type textTable struct {
	rows [][][]string // row, cell, line
}

func newTextTable(header ...string) *textTable {
	t := &textTable{}
	t.add(header...)
	return t
}

// add appends a row of one-line cells.
func (t *textTable) add(cells ...string) {
	row := make([][]string, len(cells))
	for i, c := range cells {
		row[i] = []string{c}
	}
	t.rows = append(t.rows, row)
}

// addLines appends a row whose cells are given as their lines.
func (t *textTable) addLines(cells ...[]string) { t.rows = append(t.rows, cells) }

func (t *textTable) write(w io.Writer) error {
	widths := make([]int, len(t.rows[0]))
	for _, r := range t.rows {
		for i, c := range r {
			for _, l := range c {
				widths[i] = max(widths[i], utf8.RuneCountInString(l))
			}
		}
	}
	var b strings.Builder
	for _, r := range t.rows {
		height := 1
		for _, c := range r {
			height = max(height, len(c))
		}
		for n := range height {
			var line strings.Builder
			for i, c := range r {
				s := ""
				if n < len(c) {
					s = c[n]
				}
				line.WriteString(s)
				if i < len(r)-1 {
					line.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(s)+2))
				}
			}
			out := line.String()
			if n > 0 {
				out = strings.TrimRight(out, " ")
			}
			b.WriteString(out)
			b.WriteByte('\n')
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
