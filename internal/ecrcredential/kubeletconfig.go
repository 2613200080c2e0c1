package ecrcredential

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletv1 "k8s.io/kubelet/config/v1"
	credv1 "k8s.io/kubelet/pkg/apis/credentialprovider/v1"
	"sigs.k8s.io/yaml"
)

// Where the kubelet finds the plugin and its configuration on a node, by
// default: the paths `awsccmctl install kubeadm --ecr-credential-provider`
// passes to the kubelet, the DaemonSet installs into, and preflight
// suggests. Any paths work as long as the three agree.
const (
	// DefaultConfigPath is the kubelet's --image-credential-provider-config.
	DefaultConfigPath = "/etc/kubernetes/image-credential-provider-config.yaml"
	// DefaultBinDir is the kubelet's --image-credential-provider-bin-dir.
	DefaultBinDir = "/usr/libexec/kubernetes/kubelet-plugins/credential-provider/exec"
	// DefaultCacheDuration is the config's defaultCacheDuration. The
	// plugin always sets cacheDuration from the token, so this applies
	// only to a response without one; 12h is ECR's token lifetime.
	DefaultCacheDuration = 12 * time.Hour
)

// KubeletConfig is the kubelet's CredentialProviderConfig
// (kubelet.config.k8s.io/v1) that runs this plugin for every private ECR
// host form (MatchImages), speaking credentialprovider.kubelet.k8s.io/v1.
func KubeletConfig() kubeletv1.CredentialProviderConfig {
	return kubeletv1.CredentialProviderConfig{
		TypeMeta: metav1.TypeMeta{APIVersion: kubeletv1.SchemeGroupVersion.String(), Kind: "CredentialProviderConfig"},
		Providers: []kubeletv1.CredentialProvider{{
			Name:                 BinaryName,
			MatchImages:          MatchImages(),
			DefaultCacheDuration: &metav1.Duration{Duration: DefaultCacheDuration},
			APIVersion:           credv1.SchemeGroupVersion.String(),
		}},
	}
}

// KubeletConfigYAML is KubeletConfig as the file the kubelet reads, with a
// comment saying where it goes.
func KubeletConfigYAML() ([]byte, error) {
	b, err := yaml.Marshal(KubeletConfig())
	if err != nil {
		return nil, fmt.Errorf("render the CredentialProviderConfig: %w", err)
	}
	head := "# The kubelet's image credential provider configuration for private Amazon ECR (written by awsccmctl).\n" +
		"# Save it as the kubelet's --image-credential-provider-config (default " + DefaultConfigPath + ")\n" +
		"# and put " + BinaryName + " in its --image-credential-provider-bin-dir (default " + DefaultBinDir + ").\n"
	return append([]byte(head), b...), nil
}
