// Package templates holds the Kubernetes manifests `awsccmctl install`
// renders: one text/template file per object, embedded in the binary.
//
// The templates are rendered only by internal/install, from its typed and
// validated Values; every string they print goes through the `quote` or
// `toYaml` functions so that no value can change the YAML's structure.
// internal/install's tests decode every rendered document into its typed
// object, compare it with golden files and apply it to a real kube-apiserver
// with server-side dry run.
package templates

import "embed"

// FS holds every *.yaml.tmpl file of this folder.
//
//go:embed *.yaml.tmpl
var FS embed.FS
