package nodechecks

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/awsccmctl/awsccmctl/internal/ecrcredential"
	"github.com/awsccmctl/awsccmctl/internal/nodefiles"
	"github.com/awsccmctl/awsccmctl/internal/preflight"
)

// The in-tree AWS provider gave the kubelet built-in credentials for private
// ECR registries; it was removed in Kubernetes 1.27. Without it the kubelet
// needs an image credential provider plugin, this project's
// ecr-credential-provider (internal/ecrcredential, the same name and protocol
// as kubernetes/cloud-provider-aws's), to pull from ECR. This file holds what
// node and cluster mode know about that.

const (
	// ECRProviderName is the executable of the ECR credential provider.
	ECRProviderName = ecrcredential.BinaryName
	// ECRSampleRegistry is a private ECR registry host; a kubelet's
	// credential providers must match it.
	ECRSampleRegistry = "123456789012.dkr.ecr.us-east-1.amazonaws.com"
	// Where the remediation suggests to put the provider's configuration
	// and executable; any paths work.
	suggestedProviderConfig = ecrcredential.DefaultConfigPath
	suggestedProviderBinDir = ecrcredential.DefaultBinDir
)

// ecrRegistry matches the private ECR hosts the in-tree AWS provider served
// (its pkg/credentialprovider/aws ecrPattern): the ones that lose their
// credentials with it.
var ecrRegistry = regexp.MustCompile(`^[0-9]{12}\.dkr\.ecr(-fips)?\.[a-zA-Z0-9][a-zA-Z0-9-_]*\.amazonaws\.com(\.cn)?$`)

// ECRRegistry returns the registry host of image ("<account>.dkr.ecr.<region>.amazonaws.com")
// when it is a private ECR registry.
func ECRRegistry(image string) (string, bool) {
	host, _, found := strings.Cut(image, "/")
	if !found || !ecrRegistry.MatchString(host) {
		return "", false
	}
	return host, true
}

// Remediation parts: the provider entry of a CredentialProviderConfig (the
// one `awsccmctl install kubeadm --print-credential-provider-config`
// writes), and the instance role's permissions it needs.
var ecrProviderEntry = func() string {
	p := ecrcredential.KubeletConfig().Providers[0]
	return fmt.Sprintf("{name: %s, matchImages: [\"%s\"], defaultCacheDuration: %s, apiVersion: %s}",
		p.Name, strings.Join(p.MatchImages, `", "`), strings.TrimSuffix(p.DefaultCacheDuration.Duration.String(), "0m0s"), p.APIVersion)
}()

const ecrIAM = "allow the instance role ecr:GetAuthorizationToken and the pull actions (iam/node-policy.json from `awsccmctl install iam`, or the AWS managed policy AmazonEC2ContainerRegistryReadOnly), and for public.ecr.aws images ecr-public:GetAuthorizationToken and sts:GetServiceBearerToken (iam/node-policy.json has both)"

// ecrProviderFiles says what to put on a node for the kubelet flags to use.
var ecrProviderFiles = "put " + ECRProviderName + " (awsccmctl's release, or the CCM image: `awsccmctl install manifests --ecr-credential-provider` renders a DaemonSet that copies it onto every node; docs/ecr-credential-provider.md) in a directory such as " + suggestedProviderBinDir +
	", write the kubelet's CredentialProviderConfig to a file such as " + suggestedProviderConfig + " (`awsccmctl install kubeadm --print-credential-provider-config` prints it; its provider is " + ecrProviderEntry + ")" +
	", and " + ecrIAM

// ECRProviderSetup says how to give a kubelet ECR credentials, from the
// files to the flags.
var ECRProviderSetup = ecrProviderFiles + "; then start the kubelet with --" + nodefiles.FlagCredentialProviderConfig + "=<that file> --" +
	nodefiles.FlagCredentialProviderBinDir + "=<that directory> (`awsccmctl install kubeadm --ecr-credential-provider` adds both)"

func (r runner) kubeletECRCredentialProvider() preflight.Result {
	k := r.in.Node.Kubelet
	if k == nil {
		return skipNoKubelet()
	}
	cp := r.in.Node.CredentialProviders()
	if !cp.Configured() {
		flags := fmt.Sprintf("--%s=%s --%s=%s", nodefiles.FlagCredentialProviderConfig, suggestedProviderConfig, nodefiles.FlagCredentialProviderBinDir, suggestedProviderBinDir)
		return preflight.Fail(ecrProviderFiles+"; then "+kubeletFix(k, "add", flags),
			"kubelet has no --%s and no --%s: without the in-tree AWS provider (removed in 1.27) it has no credentials for private ECR registries, so it cannot pull an ECR image it has not cached (cluster mode's images-ecr-credential-provider lists the Pods that use them)",
			nodefiles.FlagCredentialProviderConfig, nodefiles.FlagCredentialProviderBinDir)
	}
	if len(cp.Problems) > 0 {
		return preflight.Fail("fix each problem listed (the kubelet does not start until then), then `systemctl restart kubelet`",
			"the kubelet exits at start (\"Failed to register CRI auth plugins\") with this credential provider setup: %s", strings.Join(cp.Problems, "; "))
	}
	matching := cp.Matching(ECRSampleRegistry)
	if len(matching) == 0 {
		var have []string
		for _, p := range cp.Providers {
			have = append(have, fmt.Sprintf("%s (matchImages %s)", p.Name, strings.Join(p.MatchImages, ", ")))
		}
		return preflight.Fail(fmt.Sprintf("add the provider %s to %s, put the %s executable in %s, %s, then `systemctl restart kubelet`",
			ecrProviderEntry, cp.ConfigPath, ECRProviderName, cp.BinDir, ecrIAM),
			"no credential provider in %s matches the ECR registry %s, so the kubelet pulls private ECR images without credentials; providers: %s",
			strings.Join(cp.Files, ", "), ECRSampleRegistry, strings.Join(have, "; "))
	}
	p := matching[0]
	return preflight.Pass("credential provider %s (matchImages %s) in %s serves ECR registries such as %s; executable %s",
		p.Name, strings.Join(p.MatchImages, ", "), strings.Join(cp.Files, ", "), ECRSampleRegistry, cp.Executables[p.Name])
}
