package ecrcredential

import (
	"fmt"
	"strings"
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

// TokenAttributes ask the kubelet to pass each Pod's service-account
// token to the plugin (KEP-4412: Kubernetes 1.33 alpha behind the
// KubeletServiceAccountTokenForCredentialProviders feature gate, beta and
// on by default from 1.34), so that a Pod pulls with the role its service
// account names (RoleARNAnnotation) instead of the node's.
type TokenAttributes struct {
	// Audience is the audience of the tokens the kubelet requests
	// (serviceAccountTokenAudience); "" renders no tokenAttributes. The
	// roles' trust policies must accept it (<issuer>:aud), and the
	// kubelets must be allowed to request it (RBAC verb
	// request-serviceaccounts-token-audience).
	Audience string
	// RequireRole makes the annotation required: the kubelet then does
	// not run the plugin, and so pulls without ECR credentials, for a Pod
	// without a service account or whose service account lacks it. Without
	// it such Pods pull with the node's role, as upstream's provider does.
	RequireRole bool
}

// validate refuses an audience the kubelet would refuse, or that
// cannot be an STS audience.
func (t TokenAttributes) validate() error {
	if t.Audience == "" && t.RequireRole {
		return fmt.Errorf("requiring the %s annotation needs a service-account token audience", RoleARNAnnotation)
	}
	if strings.TrimSpace(t.Audience) != t.Audience || strings.ContainsAny(t.Audience, " \t\n,") {
		return fmt.Errorf("service-account token audience %q: want one audience without spaces or commas, e.g. sts.amazonaws.com", t.Audience)
	}
	return nil
}

// stanza is the provider's tokenAttributes: the token for Audience, cached
// per service account (the role depends only on it: its annotation and the
// token's sub), with the role annotation passed along.
func (t TokenAttributes) stanza() *kubeletv1.ServiceAccountTokenAttributes {
	if t.Audience == "" {
		return nil
	}
	a := &kubeletv1.ServiceAccountTokenAttributes{
		ServiceAccountTokenAudience: t.Audience,
		CacheType:                   kubeletv1.ServiceAccountServiceAccountTokenCacheType,
		RequireServiceAccount:       &t.RequireRole,
	}
	if t.RequireRole {
		a.RequiredServiceAccountAnnotationKeys = []string{RoleARNAnnotation}
	} else {
		a.OptionalServiceAccountAnnotationKeys = []string{RoleARNAnnotation}
	}
	return a
}

// KubeletConfig is the kubelet's CredentialProviderConfig
// (kubelet.config.k8s.io/v1) that runs this plugin for every ECR host form
// (MatchImages), speaking credentialprovider.kubelet.k8s.io/v1, without
// service-account tokens.
func KubeletConfig() kubeletv1.CredentialProviderConfig {
	c, _ := KubeletConfigFor(TokenAttributes{}) // no tokens: nothing to validate
	return c
}

// KubeletConfigFor is KubeletConfig with the tokenAttributes of t.
func KubeletConfigFor(t TokenAttributes) (kubeletv1.CredentialProviderConfig, error) {
	if err := t.validate(); err != nil {
		return kubeletv1.CredentialProviderConfig{}, err
	}
	return kubeletv1.CredentialProviderConfig{
		TypeMeta: metav1.TypeMeta{APIVersion: kubeletv1.SchemeGroupVersion.String(), Kind: "CredentialProviderConfig"},
		Providers: []kubeletv1.CredentialProvider{{
			Name:                 BinaryName,
			MatchImages:          MatchImages(),
			DefaultCacheDuration: &metav1.Duration{Duration: DefaultCacheDuration},
			APIVersion:           credv1.SchemeGroupVersion.String(),
			TokenAttributes:      t.stanza(),
		}},
	}, nil
}

// KubeletConfigYAML is KubeletConfigFor(t) as the file the kubelet reads,
// with a comment saying where it goes.
func KubeletConfigYAML(t TokenAttributes) ([]byte, error) {
	c, err := KubeletConfigFor(t)
	if err != nil {
		return nil, err
	}
	b, err := yaml.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("render the CredentialProviderConfig: %w", err)
	}
	head := "# The kubelet's image credential provider configuration for Amazon ECR and ECR Public (written by awsccmctl).\n" +
		"# Save it as the kubelet's --image-credential-provider-config (default " + DefaultConfigPath + ")\n" +
		"# and put " + BinaryName + " in its --image-credential-provider-bin-dir (default " + DefaultBinDir + ").\n"
	if t.Audience != "" {
		head += "# tokenAttributes: the kubelet passes each Pod's service-account token (audience " + t.Audience + "); the role its\n" +
			"# service account's " + RoleARNAnnotation + " annotation names is assumed with it (Kubernetes 1.34+, or\n" +
			"# 1.33 with the KubeletServiceAccountTokenForCredentialProviders feature gate).\n"
	}
	return append([]byte(head), b...), nil
}
