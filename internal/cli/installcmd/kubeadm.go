package installcmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
	"github.com/awsccmctl/awsccmctl/internal/ecrcredential"
	"github.com/awsccmctl/awsccmctl/internal/install/kubeadmconfig"
)

// Flags of `install kubeadm`.
const (
	flagKubernetesVersion = "kubernetes-version"
	flagAPIVersion        = "api-version"
	flagNodeName          = "node-name"
	flagProviderID        = "provider-id"
	flagFromIMDS          = "from-imds"
	flagMerge             = "merge"
	flagECRProvider       = "ecr-credential-provider"
	flagECRConfig         = "credential-provider-config"
	flagECRBinDir         = "credential-provider-bin-dir"
	flagPrintECRConfig    = "print-credential-provider-config"
	flagECRTokenAudience  = "credential-provider-service-account-token-audience"
	flagECRRequireRole    = "credential-provider-require-service-account-role"
)

// imdsEndpointEnv is the variable the AWS SDK reads the IMDS endpoint from;
// messages name it so a failed --from-imds points at the fix.
const imdsEndpointEnv = "AWS_EC2_METADATA_SERVICE_ENDPOINT"

// KubeadmOptions are the flags of `install kubeadm`.
type KubeadmOptions struct {
	KubernetesVersion, APIVersion, NodeName, ProviderID string
	// FromIMDS fills NodeName and ProviderID, unless set, from IMDS.
	FromIMDS bool
	// Merge is the user's kubeadm configuration file to merge into.
	Merge string
	// ECRProvider adds the kubelet flags of ecr-credential-provider, with
	// ECRConfig and ECRBinDir as their paths on the node.
	ECRProvider          bool
	ECRConfig, ECRBinDir string
	// PrintECRConfig prints the kubelet's CredentialProviderConfig instead,
	// with tokenAttributes when ECRTokens has an audience.
	PrintECRConfig bool
	ECRTokens      ecrcredential.TokenAttributes
}

// kubeadmDeps are the outside lookups of `install kubeadm`, replaced in tests.
type kubeadmDeps struct {
	kubeadmVersion kubeadmconfig.VersionFunc
	nodeIdentity   func(context.Context) (kubeadmconfig.NodeIdentity, error)
}

func newKubeadmCommand(streams Streams) *cobra.Command {
	return newKubeadmCommandWith(streams, kubeadmDeps{kubeadmVersion: kubeadmconfig.LocalKubeadmVersion, nodeIdentity: kubeadmconfig.ReadNodeIdentity})
}

func newKubeadmCommandWith(streams Streams, deps kubeadmDeps) *cobra.Command {
	o := &KubeadmOptions{}
	cmd := &cobra.Command{
		Use:   "kubeadm",
		Short: "Print the kubeadm configuration for a cluster with the external CCM",
		Long: `kubeadm prints the kubeadm configuration fragments that make a cluster use the
external AWS cloud controller manager: a ClusterConfiguration (kube-controller-manager
--cloud-provider=external), an InitConfiguration and a JoinConfiguration (kubelet
--cloud-provider=external, and with --provider-id / --node-name the node's providerID
and name). It does not contact the cluster.

--merge FILE merges them into your own kubeadm configuration file instead and
prints the result: every document is kept (KubeletConfiguration,
KubeProxyConfiguration and kinds it does not know byte for byte), your extraArgs
and kubeletExtraArgs stay, a ClusterConfiguration is added to an init file that
has none, and a setting of yours that contradicts the external CCM (for example
cloud-provider=aws, another provider ID) is an error naming it. The file's API
version is kept.

The kubeadm API version is kubeadm.k8s.io/v1beta3 before Kubernetes 1.31 and
v1beta4 from 1.31. --api-version may pick the other where the cluster's kubeadm
reads both: kubeadm 1.22 to 1.35 read v1beta3, 1.31 and later v1beta4.
--kubernetes-version takes v1.37.1 or 1.37 (written as v1.37.0). Without it the
version of the kubeadm on PATH (kubeadm version -o short) is used, or with
--merge the file's kubernetesVersion.

--ecr-credential-provider gives the kubelet credentials for ECR registries (private
ones and ECR Public) through this project's ecr-credential-provider: it adds
--image-credential-provider-config and --image-credential-provider-bin-dir to the
kubelet's flags (paths: --credential-provider-config, --credential-provider-bin-dir).
Both must exist on the node before kubeadm starts the kubelet: write the file with
--print-credential-provider-config, and copy the binary from the release or let the
DaemonSet of 'install manifests --ecr-credential-provider' copy it (see
docs/ecr-credential-provider.md). With
--credential-provider-service-account-token-audience the printed configuration
also asks the kubelet for each Pod's service-account token with that audience
(tokenAttributes, Kubernetes 1.34+), and ecr-credential-provider pulls with the
role the Pod's service account names in its eks.amazonaws.com/ecr-role-arn
annotation; --credential-provider-require-service-account-role makes that
annotation required (Pods without it get no ECR credentials) instead of falling
back to the node's role.

--from-imds, for bootstrap scripts on the node itself, reads instance-id,
placement/availability-zone and local-hostname from the instance metadata service
(IMDSv2) and sets --provider-id=aws:///<zone>/<instance-id> and
--node-name=<local-hostname>; flags given explicitly win. If IMDS cannot be reached
the command exits with code 3 (` + imdsEndpointEnv + ` overrides the endpoint).`,
		Example: `  awsccmctl install kubeadm --kubernetes-version v1.37.1 > ccm-kubeadm.yaml
  awsccmctl install kubeadm --merge kubeadm-init.yaml > kubeadm-init-ccm.yaml
  # on each node, in the bootstrap script, before kubeadm join:
  awsccmctl install kubeadm --from-imds > /etc/kubernetes/ccm-node.yaml
  # the same with private ECR images:
  awsccmctl install kubeadm --print-credential-provider-config > /etc/kubernetes/image-credential-provider-config.yaml
  awsccmctl install kubeadm --from-imds --ecr-credential-provider > /etc/kubernetes/ccm-node.yaml
  # Pods pull with the role their service account names:
  awsccmctl install kubeadm --print-credential-provider-config --credential-provider-service-account-token-audience sts.amazonaws.com`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if _, err := streams.format("kubeadm", "kubeadm's YAML configuration", formatText); err != nil {
				return err
			}
			if o.PrintECRConfig {
				return printCredentialProviderConfig(cmd.Flags().Changed, o.ECRTokens, streams)
			}
			for _, f := range []string{flagECRTokenAudience, flagECRRequireRole} {
				if cmd.Flags().Changed(f) {
					return exitcode.UsageError(fmt.Errorf("--%s is part of the CredentialProviderConfig: use it with --%s", f, flagPrintECRConfig))
				}
			}
			opts, err := o.Complete(cmd.Context(), cmd.Flags().Changed, deps)
			if err != nil {
				return err
			}
			if o.Merge != "" {
				return mergeKubeadm(o.Merge, opts, streams)
			}
			return writeKubeadm(opts, streams)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.KubernetesVersion, flagKubernetesVersion, "", "Kubernetes version of the cluster, e.g. v1.37.1 or 1.37 (default: kubeadm version -o short, or with --merge the file's)")
	fs.StringVar(&o.APIVersion, flagAPIVersion, "", "kubeadm API version, "+kubeadmconfig.V1beta3+" (kubeadm 1.22 to 1.35) or "+kubeadmconfig.V1beta4+" (1.31 and later) (default: from the Kubernetes version)")
	fs.StringVar(&o.NodeName, flagNodeName, "", "nodeRegistration.name of the Init/JoinConfiguration (the Node's name)")
	fs.StringVar(&o.ProviderID, flagProviderID, "", "the kubelet's --provider-id, aws:///<zone>/<instance-id>")
	fs.BoolVar(&o.FromIMDS, flagFromIMDS, false, "read --provider-id and --node-name from the instance metadata service (run on the node)")
	fs.StringVar(&o.Merge, flagMerge, "", "your kubeadm configuration file: print it with the CCM's settings merged in, instead of the fragments")
	fs.BoolVar(&o.ECRProvider, flagECRProvider, false, "add the kubelet flags of ecr-credential-provider (ECR and ECR Public images)")
	fs.StringVar(&o.ECRConfig, flagECRConfig, ecrcredential.DefaultConfigPath, "with --"+flagECRProvider+": the kubelet's --image-credential-provider-config on the node")
	fs.StringVar(&o.ECRBinDir, flagECRBinDir, ecrcredential.DefaultBinDir, "with --"+flagECRProvider+": the kubelet's --image-credential-provider-bin-dir on the node")
	fs.BoolVar(&o.PrintECRConfig, flagPrintECRConfig, false, "print the kubelet's CredentialProviderConfig for ecr-credential-provider instead (write it to --"+flagECRConfig+" on each node)")
	fs.StringVar(&o.ECRTokens.Audience, flagECRTokenAudience, "", "with --"+flagPrintECRConfig+": the kubelet passes each Pod's service-account token with this audience (tokenAttributes, e.g. sts.amazonaws.com), and Pods pull with the role their service account's "+ecrcredential.RoleARNAnnotation+" annotation names")
	fs.BoolVar(&o.ECRTokens.RequireRole, flagECRRequireRole, false, "with --"+flagECRTokenAudience+": require the "+ecrcredential.RoleARNAnnotation+" annotation (Pods without it get no ECR credentials) instead of pulling with the node's role")
	return cmd
}

// Complete turns the flags into kubeadmconfig.Options: it asks kubeadm for
// the version and IMDS for the node's identity where needed, then
// validates. changed reports whether a flag was set explicitly.
func (o *KubeadmOptions) Complete(ctx context.Context, changed func(string) bool, deps kubeadmDeps) (kubeadmconfig.Options, error) {
	opts := kubeadmconfig.Options{KubernetesVersion: o.KubernetesVersion, APIVersion: o.APIVersion,
		NodeName: o.NodeName, ProviderID: o.ProviderID}
	if (changed(flagECRConfig) || changed(flagECRBinDir)) && !o.ECRProvider {
		return opts, exitcode.UsageError(fmt.Errorf("--%s and --%s need --%s", flagECRConfig, flagECRBinDir, flagECRProvider))
	}
	if o.ECRProvider {
		opts.CredentialProvider = &kubeadmconfig.CredentialProvider{ConfigPath: o.ECRConfig, BinDir: o.ECRBinDir}
	}
	if opts.KubernetesVersion == "" && o.Merge == "" {
		// With --merge the file says (kubernetesVersion, apiVersion).
		v, err := deps.kubeadmVersion(ctx)
		switch {
		case err == nil:
			opts.KubernetesVersion = v
		case opts.APIVersion != "":
			// The API version is known; kubeadm defaults kubernetesVersion.
		case errors.Is(err, kubeadmconfig.ErrNoKubeadm):
			return opts, exitcode.UsageError(fmt.Errorf("--%s is required: %w to ask", flagKubernetesVersion, err))
		default:
			return opts, exitcode.UsageError(fmt.Errorf("--%s is required: asking kubeadm failed: %w", flagKubernetesVersion, err))
		}
	}
	if o.FromIMDS && (!changed(flagNodeName) || !changed(flagProviderID)) {
		id, err := deps.nodeIdentity(ctx)
		if err != nil {
			return opts, &exitcode.Error{Code: exitcode.Unreachable, Err: fmt.Errorf(
				"--%s: cannot read the instance metadata service (on EC2, is IMDS enabled and the hop limit enough? elsewhere set %s): %w",
				flagFromIMDS, imdsEndpointEnv, err)}
		}
		if !changed(flagProviderID) {
			opts.ProviderID = id.ProviderID()
		}
		if !changed(flagNodeName) {
			opts.NodeName = id.LocalHostname
		}
	}
	var problems []string
	// With --merge, Merge validates the options against the file (whose
	// API version and kubernetesVersion count too).
	switch err := opts.Validate(); {
	case o.Merge == "" && err != nil:
		problems = append(problems, describeKubeadm(err))
	case o.Merge != "":
		if err := opts.ValidateNode(); err != nil {
			problems = append(problems, describeKubeadm(err))
		}
	}
	if opts.NodeName != "" {
		// The kubelet registers the Node under this name.
		for _, m := range validation.IsDNS1123Subdomain(opts.NodeName) {
			problems = append(problems, fmt.Sprintf("  - --%s: node name %q: %s", flagNodeName, opts.NodeName, m))
		}
	}
	if len(problems) > 0 {
		return opts, exitcode.UsageError(fmt.Errorf("invalid kubeadm options:\n%s", strings.Join(problems, "\n")))
	}
	return opts, nil
}

// kubeadmFields maps kubeadmconfig's fields to the flags that set them.
var kubeadmFields = flagOfField{
	kubeadmconfig.FieldProviderID:               flagProviderID,
	kubeadmconfig.FieldAPIVersion:               flagAPIVersion,
	kubeadmconfig.FieldKubernetesVersion:        flagKubernetesVersion,
	kubeadmconfig.FieldCredentialProviderConfig: flagECRConfig,
	kubeadmconfig.FieldCredentialProviderBinDir: flagECRBinDir,
}

// describeKubeadm lists the problems one per line, each naming its flag.
func describeKubeadm(err error) string { return listProblems(err, kubeadmFields) }

// mergeKubeadm prints the user's file with the fragments merged in
// (kubeadmconfig.Merge). Problems with the file are usage errors naming
// --merge and the file.
func mergeKubeadm(path string, opts kubeadmconfig.Options, streams Streams) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return exitcode.UsageError(fmt.Errorf("--%s: %w", flagMerge, err))
	}
	out, err := kubeadmconfig.Merge(data, opts)
	if err != nil {
		return exitcode.UsageError(fmt.Errorf("--%s %s:\n%s", flagMerge, path, describeKubeadm(err)))
	}
	_, err = streams.Out.Write(out)
	return err
}

// printCredentialProviderConfig prints the kubelet's CredentialProviderConfig
// for ecr-credential-provider; no other flag applies.
func printCredentialProviderConfig(changed func(string) bool, tokens ecrcredential.TokenAttributes, streams Streams) error {
	for _, f := range []string{flagKubernetesVersion, flagAPIVersion, flagNodeName, flagProviderID, flagFromIMDS, flagMerge, flagECRProvider, flagECRConfig, flagECRBinDir} {
		if changed(f) {
			return exitcode.UsageError(fmt.Errorf("--%s prints only the CredentialProviderConfig: leave out --%s", flagPrintECRConfig, f))
		}
	}
	if changed(flagECRRequireRole) && tokens.Audience == "" {
		return exitcode.UsageError(fmt.Errorf("--%s needs --%s", flagECRRequireRole, flagECRTokenAudience))
	}
	b, err := ecrcredential.KubeletConfigYAML(tokens)
	if err != nil {
		return exitcode.UsageError(fmt.Errorf("--%s: %w", flagECRTokenAudience, err))
	}
	_, err = streams.Out.Write(b)
	return err
}

// writeKubeadm prints the kubeadm fragments.
func writeKubeadm(opts kubeadmconfig.Options, streams Streams) error {
	b, err := kubeadmconfig.Render(opts)
	if err != nil {
		return err
	}
	_, err = streams.Out.Write(b)
	return err
}
