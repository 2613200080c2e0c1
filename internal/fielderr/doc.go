// Package fielderr is the error a library's validation returns for one
// field of its input. It names the field apart from the message, so a
// command maps the field to the flag that sets it (and says so to the
// user) without reading the message's text.
package fielderr
