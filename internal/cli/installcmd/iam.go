package installcmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/awsccmctl/awsccmctl/internal/awsapi"
	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
)

// Flags of `install iam`.
const (
	flagRole           = "role"
	flagLeastPrivilege = "least-privilege"
	flagClusterID      = "cluster-id"
)

// Roles `install iam --role` prints a policy for. They are the keys of the
// JSON object printed without --role.
const (
	RoleControlPlane = "control-plane"
	RoleNode         = "node"
	RolePreflight    = "preflight"
)

var iamRoles = []string{RoleControlPlane, RoleNode, RolePreflight}

// clusterIDPattern is what a cluster ID may look like in the tag key
// kubernetes.io/cluster/<id> and so in an IAM condition key.
var clusterIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:@+=-]{0,110}$`)

// IAMOptions are the flags of `install iam`.
type IAMOptions struct {
	// Role is control-plane, node or preflight; empty means control-plane
	// and node as one JSON object.
	Role string
	// LeastPrivilege scopes the control-plane policy's mutating actions to
	// resources tagged kubernetes.io/cluster/<ClusterID>.
	LeastPrivilege bool
	ClusterID      string
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
a JSON object {"control-plane": <document>, "node": <document>}.

--least-privilege --cluster-id ID scopes the control-plane policy's mutating
actions to resources tagged kubernetes.io/cluster/ID (the CCM tags what it
creates so); actions IAM cannot scope by tag stay on Resource "*".`,
		Example: `  awsccmctl install iam --role control-plane > ccm-policy.json
  aws iam put-role-policy --role-name control-plane --policy-name aws-ccm --policy-document file://ccm-policy.json
  awsccmctl install iam --role control-plane --least-privilege --cluster-id prod`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Validate(cmd.Flags().Changed); err != nil {
				return err
			}
			return WriteIAM(*o, streams)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.Role, flagRole, "", "print one policy: "+strings.Join(iamRoles, ", ")+" (default: control-plane and node as one JSON object)")
	fs.BoolVar(&o.LeastPrivilege, flagLeastPrivilege, false, "scope the control-plane policy's changes to the cluster's tagged resources (needs --cluster-id)")
	fs.StringVar(&o.ClusterID, flagClusterID, "", "the cluster ID: the value ID of the cluster tag kubernetes.io/cluster/ID (with --least-privilege)")
	return cmd
}

// Validate returns every problem at once, as a usage error naming the
// flags. changed reports whether a flag was set.
func (o *IAMOptions) Validate(changed func(string) bool) error {
	var errs []string
	switch o.Role {
	case "", RoleControlPlane, RoleNode, RolePreflight:
	default:
		errs = append(errs, fmt.Sprintf("--%s %q: want one of %s", flagRole, o.Role, strings.Join(iamRoles, ", ")))
	}
	if o.LeastPrivilege {
		switch {
		case o.Role == RoleNode || o.Role == RolePreflight:
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

// IAMPolicies returns the documents o asks for, by role.
func IAMPolicies(o IAMOptions) map[string]awsapi.PolicyDocument {
	cp := awsapi.Policy(awsapi.ComponentCCM)
	if o.LeastPrivilege {
		cp = awsapi.LeastPrivilegePolicy(awsapi.ComponentCCM, o.ClusterID)
	}
	all := map[string]awsapi.PolicyDocument{
		RoleControlPlane: cp,
		RoleNode:         awsapi.NodePolicy(),
		RolePreflight:    awsapi.Policy(awsapi.ComponentPreflight),
	}
	if o.Role != "" {
		return map[string]awsapi.PolicyDocument{o.Role: all[o.Role]}
	}
	return map[string]awsapi.PolicyDocument{RoleControlPlane: all[RoleControlPlane], RoleNode: all[RoleNode]}
}

// WriteIAM writes the policy document of o.Role, or without a role the
// object of the control-plane and node documents, as indented JSON.
func WriteIAM(o IAMOptions, streams Streams) error {
	docs := IAMPolicies(o)
	var (
		b   []byte
		err error
	)
	if o.Role != "" {
		b, err = docs[o.Role].JSON()
	} else {
		// encoding/json sorts map keys: control-plane, then node.
		b, err = json.MarshalIndent(docs, "", "  ")
		b = append(b, '\n')
	}
	if err != nil {
		return err
	}
	if o.LeastPrivilege && !hasConditions(docs[RoleControlPlane]) && streams.Err != nil {
		fmt.Fprintf(streams.Err, "note: the control-plane policy has no tag condition on %s: the CCM changes nothing in AWS yet, so nothing needs scoping\n", o.ClusterID)
	}
	_, err = streams.Out.Write(b)
	return err
}

// hasConditions reports whether any statement of d has a condition.
func hasConditions(d awsapi.PolicyDocument) bool {
	for _, s := range d.Statement {
		if len(s.Condition) > 0 {
			return true
		}
	}
	return false
}
