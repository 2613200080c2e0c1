// Package tutorial runs the commands of docs/getting-started.md as written,
// in one bash in the repository's root, the way a reader following the page
// on a fresh checkout would: the page is only as good as its commands.
package tutorial
