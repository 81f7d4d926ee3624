package main

// suggest returns the command a mistyped name most likely meant: the nearest by edit
// distance, within a third of the name's length (at least 1), or the one command the
// name is a prefix of; "" when nothing is that close.
func suggest(name string, cmds []command) string {
	best, bestDist := "", max(1, len(name)/3)+1
	var prefixed []string
	for _, c := range cmds {
		if d := editDistance(name, c.name); d < bestDist {
			best, bestDist = c.name, d
		}
		if len(name) >= 2 && len(name) < len(c.name) && c.name[:len(name)] == name {
			prefixed = append(prefixed, c.name)
		}
	}
	if best == "" && len(prefixed) == 1 {
		return prefixed[0]
	}
	return best
}

// editDistance is the Levenshtein distance between a and b counted in bytes, with a
// swap of two adjacent bytes counting as one edit (the commonest typo).
func editDistance(a, b string) int {
	// d[i][j] is the distance between a[:i] and b[:j].
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
