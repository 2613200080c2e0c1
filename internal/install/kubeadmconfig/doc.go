// Package kubeadmconfig renders the kubeadm configuration that runs a
// cluster with the external AWS cloud-controller-manager: the kubelet's
// --cloud-provider=external (and, per node, its name and providerID) in
// InitConfiguration and JoinConfiguration, and kube-controller-manager's
// --cloud-provider=external in ClusterConfiguration, so that `kubeadm
// upgrade` keeps them.
//
// The API version follows kubeadm's support matrix: kubeadm 1.22 to 1.35
// read kubeadm.k8s.io/v1beta3 (map-style extraArgs), 1.31 and later v1beta4
// (list-style); Render writes v1beta3 before 1.31 and v1beta4 from it, and
// refuses an API version the cluster's kubeadm does not read.
//
// With Options.CredentialProvider the Init- and JoinConfiguration also give
// the kubelet its image credential provider flags for private ECR
// (--image-credential-provider-config, --image-credential-provider-bin-dir;
// the plugin is cmd/ecr-credential-provider).
//
// Merge adds the same settings to a user's own kubeadm configuration file,
// keeping every document and setting of theirs, and Check verifies a file
// carries them. Merge first decodes the documents kubeadm reads strictly, as
// kubeadm does, against field trees generated from kubeadm's own Go types
// (fields/, hack/gen-kubeadm-fields.sh), so a field kubeadm would refuse is
// an error here rather than in kubeadm init.
//
// LocalKubeadmVersion and ReadNodeIdentity look up the inputs a command
// leaves out: the version of the kubeadm on PATH, and the node's instance,
// zone and host name from the instance metadata service.
package kubeadmconfig
