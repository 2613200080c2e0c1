// Package install renders the Kubernetes objects that run the AWS cloud
// controller manager on a cluster: its ServiceAccount, ClusterRole
// system:cloud-controller-manager, the bindings, the cloud-config ConfigMap
// and a DaemonSet on the control-plane nodes (or a Deployment when the
// control plane's nodes are not in the cluster).
//
// The steps are separate and tested on their own: DecodeConfig reads a
// versioned InstallConfiguration file strictly, Values.Default fills the
// defaults, Values.Validate reports every problem at once, and Render
// executes the templates of the top-level templates package into one
// multi-document YAML stream in apply order; WriteManifests writes it, or
// one file per object for GitOps. The command layer
// (internal/cli/installcmd) merges flags, environment and the file.
package install
