// Package urlcred keeps credentials that a URL carries in its userinfo
// (http://user:password@host) out of logs and error messages: [Split] takes
// them out of the URL for a client's own authentication, and [Redact]
// masks the password of any URL that is printed.
//
// It is used by config (validation messages), codecs (the schema registry
// client) and deltalog/s3store (table URLs), and imports nothing but the
// standard library.
package urlcred
