// Package nodephase is the node-local part of `awsccmctl migrate-from-intree
// node`: it moves one node's static Pod manifests and kubelet flags from the
// in-tree AWS cloud provider to the external cloud controller manager, one
// phase at a time (see the Phase constants), and puts them back on restore.
//
// Phases are declarative. Each managed file's target is computed from its
// original content, kept in a backup outside the static Pod directory the
// first time the tool edits it, so a phase can be re-run (nothing changes the
// second time) and an earlier phase can be applied after a later one (a
// rollback). A file that is neither its original nor the output of a phase
// was edited by someone else since: the run refuses and writes nothing.
//
// Files are edited as text: only the flags, volumes and variables the tool
// owns change; comments, key order, indentation, quoting and every other
// flag stay as they were. Each edit is checked by parsing the result and
// comparing it with the intended change before anything is written. Writes
// are atomic (a dot-prefixed temporary file in the same directory, fsync,
// rename), and DryRun computes the same result and diffs without writing.
//
// EditClusterConfiguration makes the matching change to the
// ClusterConfiguration of ConfigMap kube-system/kubeadm-config, so that
// `kubeadm upgrade` does not undo the phases.
package nodephase
