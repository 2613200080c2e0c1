// Package installcmd is `awsccmctl install`: it puts the AWS cloud
// controller manager on a cluster. `install manifests` writes the objects as
// YAML, to stdout or one file per object, for GitOps.
//
// Values come, in order of precedence, from flags, AWSCCMCTL_* environment
// variables (the root command writes them into unset flags), the versioned
// InstallConfiguration file given with --config, and the defaults of
// internal/install. This package only parses and merges them into options,
// makes one library call per command and prints the result with its exit
// code: decoding, defaulting, validation, rendering and writing files live
// in internal/install, applying, waiting and uninstalling in
// internal/install/deploy, detection in internal/install/detect, the IAM
// documents in internal/install/iampolicy, and the kubeadm and kops
// configurations in internal/install/kubeadmconfig and kopsconfig.
package installcmd
