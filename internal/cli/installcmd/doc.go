// Package installcmd is `awsccmctl install`: it puts the AWS cloud
// controller manager on a cluster. `install manifests` writes the objects as
// YAML, to stdout or one file per object, for GitOps.
//
// Values come, in order of precedence, from flags, AWSCCMCTL_* environment
// variables (the root command writes them into unset flags), the versioned
// InstallConfiguration file given with --config, and the defaults of
// internal/install. This package only merges them; decoding, defaulting,
// validation and rendering live in internal/install.
package installcmd
