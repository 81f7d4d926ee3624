package sqlexpr

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// parseDate reads Spark's date forms: [+-]yyyy, [+-]yyyy-[m]m, [+-]yyyy-[m]m-[d]d (the
// year of 4 to 7 digits), optionally followed by ' ' or 'T' and anything.
func parseDate(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, " T"); i >= 0 {
		s = s[:i]
	}
	sign := 1
	if s != "" && (s[0] == '+' || s[0] == '-') {
		if s[0] == '-' {
			sign = -1
		}
		s = s[1:]
	}
	parts := strings.Split(s, "-")
	if len(parts) > 3 || len(parts[0]) < 4 || len(parts[0]) > 7 {
		return 0, false
	}
	nums := []int{0, 1, 1}
	for i, p := range parts {
		if p == "" || i > 0 && len(p) > 2 || strings.TrimLeft(p, "0123456789") != "" {
			return 0, false
		}
		nums[i], _ = strconv.Atoi(p)
	}
	y, m, d := sign*nums[0], nums[1], nums[2]
	t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
	if m < 1 || m > 12 || t.Day() != d {
		return 0, false
	}
	return floorDiv(t.Unix(), 86400), true
}

// parseTimestamp reads Spark's timestamp forms: a date, then optionally ' ' or 'T',
// [h]h[:[m]m[:[s]s[.fraction]]], then a zone as Java's ZoneId.of reads it (see
// zoneOffset). Without a zone the time is UTC, the session time zone cdc2delta
// assumes; ntz checks a zone and ignores it. The fraction is cut to microseconds.
func parseTimestamp(s string, ntz bool) (int64, bool) {
	s = strings.TrimSpace(s)
	i := strings.IndexAny(s, " T")
	if i < 0 {
		days, ok := parseDate(s)
		return days * microsPerDay, ok
	}
	days, ok := parseDate(s[:i])
	if !ok {
		return 0, false
	}
	rest := s[i+1:]
	j := 0
	for j < len(rest) && (rest[j] >= '0' && rest[j] <= '9' || rest[j] == ':' || rest[j] == '.') {
		j++
	}
	clock, zone := rest[:j], strings.TrimSpace(rest[j:])
	frac, hasFrac := "", false
	if k := strings.IndexByte(clock, '.'); k >= 0 {
		// Spark takes "12:00:00." with an empty fraction.
		clock, frac, hasFrac = clock[:k], clock[k+1:], true
		if len(frac) > 9 || strings.ContainsAny(frac, ":.") {
			return 0, false
		}
	}
	hms := strings.Split(clock, ":")
	if len(hms) > 3 || (hasFrac || zone != "") && len(hms) != 3 {
		return 0, false // a fraction or a zone only follows the seconds
	}
	var vals [3]int
	for k, p := range hms {
		n, err := strconv.Atoi(p)
		if p == "" || len(p) > 2 || err != nil {
			return 0, false
		}
		vals[k] = n
	}
	if vals[0] > 23 || vals[1] > 59 || vals[2] > 59 {
		return 0, false
	}
	micros := int64(0)
	if frac != "" {
		n, err := strconv.Atoi((frac + "000000")[:6])
		if err != nil {
			return 0, false
		}
		micros = int64(n)
	}
	ts := days*microsPerDay + int64(vals[0]*3600+vals[1]*60+vals[2])*1_000_000 + micros
	if zone == "" {
		return ts, true
	}
	offset, ok := zoneOffset(zone, ts)
	if ntz {
		// Spark checks the zone of a TIMESTAMP_NTZ text and ignores it:
		// '2024-07-04 12:00:00+02:00' is 12:00.
		return ts, ok
	}
	return ts - offset*1_000_000, ok
}

// zoneOffset returns the zone's offset in seconds east of UTC at the wall time ts,
// reading it as Spark does: Java's ZoneId.of (case-sensitive: Z, UTC, GMT, UT, an
// offset, one of those three followed by an offset, or a region id) after padding
// +h:mm and +hh:m.
func zoneOffset(z string, ts int64) (int64, bool) {
	z = padOffset(z)
	switch z {
	case "Z", "UTC", "GMT", "UT":
		return 0, true
	case "", "Local": // Go's name for the machine's zone; not a Java zone id
		return 0, false
	}
	for _, prefix := range []string{"UTC", "GMT", "UT", ""} {
		if r, ok := strings.CutPrefix(z, prefix); ok && r != "" && (r[0] == '+' || r[0] == '-') {
			return parseOffset(r)
		}
	}
	if id, ok := javaShortIDs[z]; ok {
		if id[0] == '-' {
			return parseOffset(id)
		}
		z = id
	}
	loc, err := time.LoadLocation(z)
	if err != nil {
		return 0, false
	}
	wall := time.UnixMicro(ts).UTC()
	_, off := time.Date(wall.Year(), wall.Month(), wall.Day(), wall.Hour(), wall.Minute(), wall.Second(), 0, loc).Zone()
	return int64(off), true
}

// javaShortIDs is Java's ZoneId.SHORT_IDS, which Spark passes to ZoneId.of: PST is
// America/Los_Angeles, EST a fixed -05:00.
var javaShortIDs = map[string]string{
	"ACT": "Australia/Darwin", "AET": "Australia/Sydney", "AGT": "America/Argentina/Buenos_Aires",
	"ART": "Africa/Cairo", "AST": "America/Anchorage", "BET": "America/Sao_Paulo", "BST": "Asia/Dhaka",
	"CAT": "Africa/Harare", "CNT": "America/St_Johns", "CST": "America/Chicago", "CTT": "Asia/Shanghai",
	"EAT": "Africa/Addis_Ababa", "ECT": "Europe/Paris", "IET": "America/Indiana/Indianapolis",
	"IST": "Asia/Kolkata", "JST": "Asia/Tokyo", "MIT": "Pacific/Apia", "NET": "Asia/Yerevan",
	"NST": "Pacific/Auckland", "PLT": "Asia/Karachi", "PNT": "America/Phoenix", "PRT": "America/Puerto_Rico",
	"PST": "America/Los_Angeles", "SST": "Pacific/Guadalcanal", "VST": "Asia/Ho_Chi_Minh",
	"EST": "-05:00", "MST": "-07:00", "HST": "-10:00",
}

// padOffset is Spark's getZoneId fix-up of pre-3.0 offsets: +h:mm to +0h:mm and a
// final +hh:m to +hh:0m.
func padOffset(z string) string {
	i := strings.IndexAny(z, "+-")
	if i < 0 {
		return z
	}
	digit := func(c byte) bool { return c >= '0' && c <= '9' }
	r := z[i+1:]
	if len(r) >= 2 && digit(r[0]) && r[1] == ':' {
		r = "0" + r
	}
	if len(r) == 4 && digit(r[0]) && digit(r[1]) && r[2] == ':' && digit(r[3]) {
		r = r[:3] + "0" + r[3:]
	}
	return z[:i+1] + r
}

// parseOffset reads a signed offset as Java's ZoneOffset.of does: +h, +hh, +hh:mm,
// +hhmm, +hh:mm:ss or +hhmmss, at most 18 hours.
func parseOffset(s string) (int64, bool) {
	sign := int64(1)
	if s[0] == '-' {
		sign = -1
	}
	d := s[1:]
	var parts []string
	switch {
	case strings.Contains(d, ":"):
		parts = strings.Split(d, ":")
		if len(parts) > 3 {
			return 0, false
		}
	case len(d) == 1 || len(d) == 2:
		parts = []string{d}
	case len(d) == 4:
		parts = []string{d[:2], d[2:]}
	case len(d) == 6:
		parts = []string{d[:2], d[2:4], d[4:]}
	default:
		return 0, false
	}
	var hms [3]int64
	for k, p := range parts {
		if len(p) != 2 && !(k == 0 && len(parts) == 1 && len(p) == 1) || strings.TrimLeft(p, "0123456789") != "" {
			return 0, false
		}
		n, _ := strconv.Atoi(p)
		hms[k] = int64(n)
	}
	secs := hms[0]*3600 + hms[1]*60 + hms[2]
	if hms[1] > 59 || hms[2] > 59 || secs > 18*3600 {
		return 0, false
	}
	return sign * secs, true
}

// formatDate renders days as yyyy-MM-dd; ok is false outside years 1..9999.
func formatDate(days int64) (string, bool) {
	t := time.Unix(days*86400, 0).UTC()
	return t.Format("2006-01-02"), t.Year() >= 1 && t.Year() <= 9999
}

// formatTimestamp renders microseconds as Spark casts a timestamp to a string in UTC:
// yyyy-MM-dd HH:mm:ss and the fraction without trailing zeros.
func formatTimestamp(us int64) (string, bool) {
	t := time.UnixMicro(us).UTC()
	s := t.Format("2006-01-02 15:04:05")
	if f := t.Nanosecond() / 1000; f != 0 {
		s += strings.TrimRight(fmt.Sprintf(".%06d", f), "0")
	}
	return s, t.Year() >= 1 && t.Year() <= 9999
}
