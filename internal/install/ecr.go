package install

import (
	"path"

	corev1 "k8s.io/api/core/v1"

	"github.com/awsccmctl/awsccmctl/internal/ecrcredential"
)

// The ecr-credential-provider DaemonSet (Values.ECRCredentialProvider):
// the kubelet runs its image credential provider from a directory on the
// host, so this DaemonSet's only job is to put the binary there and keep it
// current. It runs the CCM image's /ecr-credential-provider (hack/image)
// with `install --dir ... --wait`: the image has no shell, and the
// binary's own install is atomic (temp file, rename, mode 0755).
const (
	// ECRDaemonSetName names the DaemonSet, its container and its pods'
	// app.kubernetes.io/name. An upgrade applies over it: MUST NOT change.
	ECRDaemonSetName = ecrcredential.BinaryName
	// ecrEntrypoint is the binary in the CCM image (hack/image defaults.go).
	ecrEntrypoint = "/" + ecrcredential.BinaryName
	// ecrMountPath is where the host directory is mounted.
	ecrMountPath = "/host/credential-provider-bin-dir"
)

// ecrTemplateData is what templates/ecr-credential-provider-daemonset.yaml.tmpl sees.
type ecrTemplateData struct {
	Name, Namespace, Image, HostDir, MountPath string
	Labels, PodLabels                          map[string]string
	Command                                    []string
	Tolerations                                []corev1.Toleration
}

func newECRTemplateData(v *Values) *ecrTemplateData {
	return &ecrTemplateData{
		Name:      ECRDaemonSetName,
		Namespace: v.Namespace,
		Image:     v.Image,
		HostDir:   v.ECRCredentialProviderBinDir,
		MountPath: ecrMountPath,
		Labels:    Labels(),
		// Not the CCM's app.kubernetes.io/name: the CCM DaemonSet's
		// selector must not match these pods.
		PodLabels: map[string]string{LabelName: ECRDaemonSetName, LabelManagedBy: ManagedBy},
		Command:   []string{ecrEntrypoint, "install", "--dir=" + ecrMountPath, "--wait"},
		// Every node, whatever its taints: a node that cannot pull its
		// CNI or CCM image from private ECR may be tainted not-ready or
		// uninitialized exactly because of it.
		Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
	}
}

// validateECRCredentialProvider: the host directory is an absolute, clean
// path, and only set with the DaemonSet.
func (v *Values) validateECRCredentialProvider(add func(field, format string, args ...any)) {
	dir := v.ECRCredentialProviderBinDir
	switch {
	case !v.ECRCredentialProvider && dir != "":
		add("ecrCredentialProviderBinDir", " %q: set only with ecrCredentialProvider (the DaemonSet that installs into it)", dir)
	case v.ECRCredentialProvider && (!path.IsAbs(dir) || path.Clean(dir) != dir):
		add("ecrCredentialProviderBinDir", " %q: want the kubelet's --image-credential-provider-bin-dir, an absolute clean path on the nodes (default %s)", dir, ecrcredential.DefaultBinDir)
	}
}
