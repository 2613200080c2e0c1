// Package yamldocs splits a YAML stream into its documents the way kubectl
// and kubeadm do (apimachinery's YAML reader, "---" lines), for the files
// awsccmctl reads: its own --config and InstallConfiguration files, which
// must hold one document, and kubeadm configuration files, which hold
// several.
package yamldocs
