// Package nodefiles reads what a Kubernetes node has on disk: the static Pod
// manifests of the control plane (kubeadm's *.yaml, kops's *.manifest) and the
// kubelet's command line as systemd would assemble it from the unit, its
// drop-ins and their environment files, plus the kubelet configuration file
// and the image credential provider configuration and plugins it names.
//
// Everything is read under a root directory, as a chroot would: `..` and
// symbolic links (absolute ones included) never leave it, so a node's disk
// image or a test fixture can be inspected safely. Files that exist but cannot
// be parsed are reported in Node.Problems, never silently ignored.
//
// The package only reads; it never changes a file.
package nodefiles
