package installcmd

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/awsccmctl/awsccmctl/internal/awsapi"
	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
	"github.com/awsccmctl/awsccmctl/internal/install/iampolicy"
)

// Flags of `install iam`.
const (
	flagRole           = "role"
	flagLeastPrivilege = "least-privilege"
	flagClusterID      = "cluster-id"
)

// clusterIDPattern is what a cluster ID may look like in the tag key
// kubernetes.io/cluster/<id> and so in an IAM condition key.
var clusterIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:@+=-]{0,110}$`)

// IAMOptions are the flags of `install iam`.
type IAMOptions struct {
	iampolicy.Options
}

func newIAMCommand(streams Streams) *cobra.Command {
	o := &IAMOptions{}
	cmd := &cobra.Command{
		Use:   "iam",
		Short: "Print the IAM policies the CCM and the nodes need",
		Long: `iam prints IAM policy documents, generated from the registry of every AWS
action the code can call (the same as iam/ in the repository):

  control-plane  the CCM's role: the control-plane nodes' instance role, or the
                 role of the CCM's ServiceAccount (IRSA / Pod Identity)
  node           every node's instance role once the cloud provider is external
                 (pulling images from ECR)
  preflight      whoever runs awsccmctl preflight (read-only)

With --role the output is one policy document, ready for
aws iam put-role-policy --policy-document file://policy.json. Without --role it is
a JSON object {"control-plane": <document>, "node": <document>}. The output is
JSON with -o text and -o json alike.

--least-privilege --cluster-id ID scopes the control-plane policy's mutating
actions to resources tagged kubernetes.io/cluster/ID (the CCM tags what it
creates so); actions IAM cannot scope by tag stay on Resource "*".`,
		Example: `  awsccmctl install iam --role control-plane > ccm-policy.json
  aws iam put-role-policy --role-name control-plane --policy-name aws-ccm --policy-document file://ccm-policy.json
  awsccmctl install iam --role control-plane --least-privilege --cluster-id prod`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// The policies are JSON documents whatever -o says; json is
			// accepted so scripts that pass -o json everywhere work.
			if _, err := streams.format("iam", "IAM policy documents, which are JSON", formatText, formatJSON); err != nil {
				return err
			}
			if err := o.Validate(cmd.Flags().Changed); err != nil {
				return err
			}
			return writeIAM(o.Options, streams)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.Role, flagRole, "", "print one policy: "+strings.Join(iampolicy.Roles, ", ")+" (default: control-plane and node as one JSON object)")
	fs.BoolVar(&o.LeastPrivilege, flagLeastPrivilege, false, "scope the control-plane policy's changes to the cluster's tagged resources (needs --cluster-id)")
	fs.StringVar(&o.ClusterID, flagClusterID, "", "the cluster ID: the value ID of the cluster tag kubernetes.io/cluster/ID (with --least-privilege)")
	return cmd
}

// Validate returns every problem at once, as a usage error naming the
// flags. changed reports whether a flag was set.
func (o *IAMOptions) Validate(changed func(string) bool) error {
	var errs []string
	switch o.Role {
	case "", iampolicy.RoleControlPlane, iampolicy.RoleNode, iampolicy.RolePreflight:
	default:
		errs = append(errs, fmt.Sprintf("--%s %q: want one of %s", flagRole, o.Role, strings.Join(iampolicy.Roles, ", ")))
	}
	if o.LeastPrivilege {
		switch {
		case o.Role == iampolicy.RoleNode || o.Role == iampolicy.RolePreflight:
			errs = append(errs, fmt.Sprintf("--%s applies to the control-plane policy only, not --%s %s", flagLeastPrivilege, flagRole, o.Role))
		case o.ClusterID == "":
			errs = append(errs, fmt.Sprintf("--%s needs --%s: the value of the cluster tag kubernetes.io/cluster/<ID>", flagLeastPrivilege, flagClusterID))
		case o.ClusterID == awsapi.ClusterIDPlaceholder || !clusterIDPattern.MatchString(o.ClusterID):
			errs = append(errs, fmt.Sprintf("--%s %q: want the cluster ID of the tag kubernetes.io/cluster/<ID> (letters, digits and ._:@+=-)", flagClusterID, o.ClusterID))
		}
	} else if changed(flagClusterID) {
		errs = append(errs, fmt.Sprintf("--%s is used only with --%s", flagClusterID, flagLeastPrivilege))
	}
	if len(errs) > 0 {
		return exitcode.UsageError(errors.New(strings.Join(errs, "\n")))
	}
	return nil
}

// writeIAM prints the policy documents o asks for (iampolicy.JSON), with a
// note on stderr when --least-privilege has nothing to scope.
func writeIAM(o iampolicy.Options, streams Streams) error {
	b, unscoped, err := iampolicy.JSON(o)
	if err != nil {
		return err
	}
	if unscoped && streams.Err != nil {
		fmt.Fprintf(streams.Err, "note: the control-plane policy has no tag condition on %s: the CCM changes nothing in AWS yet, so nothing needs scoping\n", o.ClusterID)
	}
	_, err = streams.Out.Write(b)
	return err
}
