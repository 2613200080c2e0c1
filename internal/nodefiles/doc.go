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
// It is the one reader of these formats: preflight reads a node with Read,
// and the migration's node phase (internal/migrate/nodephase), which edits
// the same files in place, uses the position-returning primitives (ScanFlags,
// BinaryIndex, ShellScript, ScanEnvFile) so that a flag, a wrapped binary or
// an environment variable means the same thing to both. Flags.Bool is the one
// rule for a boolean flag's value.
//
// The package only reads; it never changes a file.
package nodefiles
