package installcmd

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
	"github.com/awsccmctl/awsccmctl/internal/install/kubeadmconfig"
)

// Flags of `install kubeadm`.
const (
	flagKubernetesVersion = "kubernetes-version"
	flagAPIVersion        = "api-version"
	flagNodeName          = "node-name"
	flagProviderID        = "provider-id"
	flagFromIMDS          = "from-imds"
)

// imdsEndpointEnv is the variable the AWS SDK reads the IMDS endpoint from;
// messages name it so a failed --from-imds points at the fix.
const imdsEndpointEnv = "AWS_EC2_METADATA_SERVICE_ENDPOINT"

// KubeadmOptions are the flags of `install kubeadm`.
type KubeadmOptions struct {
	KubernetesVersion, APIVersion, NodeName, ProviderID string
	// FromIMDS fills NodeName and ProviderID, unless set, from IMDS.
	FromIMDS bool
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
and name). Merge them into the files given to kubeadm init and kubeadm join --config.
It does not contact the cluster.

The kubeadm API version is kubeadm.k8s.io/v1beta3 before Kubernetes 1.31 and
v1beta4 from 1.31 (--api-version overrides). Without --kubernetes-version the
version of the kubeadm on PATH (kubeadm version -o short) is used.

--from-imds, for bootstrap scripts on the node itself, reads instance-id,
placement/availability-zone and local-hostname from the instance metadata service
(IMDSv2) and sets --provider-id=aws:///<zone>/<instance-id> and
--node-name=<local-hostname>; flags given explicitly win. If IMDS cannot be reached
the command exits with code 3 (` + imdsEndpointEnv + ` overrides the endpoint).`,
		Example: `  awsccmctl install kubeadm --kubernetes-version v1.37.1 > ccm-kubeadm.yaml
  # on each node, in the bootstrap script, before kubeadm join:
  awsccmctl install kubeadm --from-imds > /etc/kubernetes/ccm-node.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := o.Complete(cmd.Context(), cmd.Flags().Changed, deps)
			if err != nil {
				return err
			}
			return writeKubeadm(opts, streams)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.KubernetesVersion, flagKubernetesVersion, "", "Kubernetes version of the cluster, e.g. v1.37.1 (default: kubeadm version -o short)")
	fs.StringVar(&o.APIVersion, flagAPIVersion, "", "kubeadm API version, "+kubeadmconfig.V1beta3+" or "+kubeadmconfig.V1beta4+" (default: from the Kubernetes version)")
	fs.StringVar(&o.NodeName, flagNodeName, "", "nodeRegistration.name of the Init/JoinConfiguration (the Node's name)")
	fs.StringVar(&o.ProviderID, flagProviderID, "", "the kubelet's --provider-id, aws:///<zone>/<instance-id>")
	fs.BoolVar(&o.FromIMDS, flagFromIMDS, false, "read --provider-id and --node-name from the instance metadata service (run on the node)")
	return cmd
}

// Complete turns the flags into kubeadmconfig.Options: it asks kubeadm for
// the version and IMDS for the node's identity where needed, then
// validates. changed reports whether a flag was set explicitly.
func (o *KubeadmOptions) Complete(ctx context.Context, changed func(string) bool, deps kubeadmDeps) (kubeadmconfig.Options, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	opts := kubeadmconfig.Options{KubernetesVersion: o.KubernetesVersion, APIVersion: o.APIVersion,
		NodeName: o.NodeName, ProviderID: o.ProviderID}
	if opts.KubernetesVersion == "" {
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
	if err := opts.Validate(); err != nil {
		problems = append(problems, describeKubeadm(err))
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

// kubeadmFields maps the prefixes of kubeadmconfig's validation errors to
// the flags that set them.
var kubeadmFields = []flagPrefix{
	{"provider ID", flagProviderID},
	{"kubeadm API version", flagAPIVersion},
	{"kubernetes version", flagKubernetesVersion},
}

// describeKubeadm lists the problems one per line, each naming its flag.
func describeKubeadm(err error) string { return listProblems(err, kubeadmFields) }

// writeKubeadm prints the kubeadm fragments.
func writeKubeadm(opts kubeadmconfig.Options, streams Streams) error {
	b, err := kubeadmconfig.Render(opts)
	if err != nil {
		return err
	}
	_, err = streams.Out.Write(b)
	return err
}
