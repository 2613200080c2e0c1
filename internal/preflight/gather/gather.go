package gather

import (
	"context"
	"fmt"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/awsccmctl/awsccmctl/internal/nodefiles"
	"github.com/awsccmctl/awsccmctl/internal/preflight"
	"github.com/awsccmctl/awsccmctl/internal/preflight/awschecks"
	"github.com/awsccmctl/awsccmctl/internal/preflight/clusterchecks"
	"github.com/awsccmctl/awsccmctl/internal/preflight/nodechecks"
)

// Values of Options.CloudRoutes.
const (
	CloudRoutesAuto = "auto"
	CloudRoutesOn   = "on"
	CloudRoutesOff  = "off"
)

// KubeConfig builds the cluster's REST config; kubectl's
// genericclioptions.ConfigFlags is one.
type KubeConfig interface {
	ToRESTConfig() (*rest.Config, error)
}

// Options say which checks run and what they look at.
type Options struct {
	// Mode is the moment preflight runs at.
	Mode preflight.Mode
	// Node reads the files of the node under Root instead of the cluster.
	Node bool
	// Root is the node's root file system (node mode).
	Root string
	// Ignore turns failures of these check IDs (or "all") into warnings.
	Ignore []string
	// Categories keeps only these categories (empty: all).
	Categories []string
	// FailOnWarning makes warnings fail the run.
	FailOnWarning bool
	// AWS runs the AWS checks too.
	AWS bool
	// CloudConfig is the CCM's cloud-config file (region, cluster ID,
	// endpoints); empty means none.
	CloudConfig string
	// Region overrides the region.
	Region string
	// HostNetwork says the CCM will run with hostNetwork: true.
	HostNetwork bool
	// CloudRoutes says whether the CCM will configure cloud routes:
	// CloudRoutesOn, CloudRoutesOff, or CloudRoutesAuto (also ""): in node
	// mode from the node's kube-controller-manager manifest, otherwise
	// unknown.
	CloudRoutes string
	// Kube builds the cluster client in cluster mode; nil uses kubectl's
	// defaults (KUBECONFIG, ~/.kube/config, in-cluster).
	Kube KubeConfig
}

// InputError says the options, or a file or configuration they name, are
// unusable: nothing was checked.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// UnreachableError says the cluster or AWS could not be reached, or the
// AWS region is unknown: the checks could not run.
type UnreachableError struct{ Err error }

func (e *UnreachableError) Error() string { return e.Err.Error() }
func (e *UnreachableError) Unwrap() error { return e.Err }

// Collect reads the node or the cluster, runs the checks of o.Mode and
// returns the report. A report with failures is no error; errors are
// *InputError or *UnreachableError, or unexpected.
func Collect(ctx context.Context, o Options) (preflight.Report, error) {
	checks, err := o.checks(ctx)
	if err != nil {
		return preflight.Report{}, err
	}
	report, err := preflight.Run(ctx, checks, preflight.Options{
		Mode: o.Mode, Categories: o.Categories, Ignore: o.Ignore, FailOnWarning: o.FailOnWarning,
	})
	if err != nil {
		return preflight.Report{}, &InputError{err}
	}
	return report, nil
}

// checks builds the checks for node or cluster mode.
func (o Options) checks(ctx context.Context) ([]preflight.Check, error) {
	if o.Node {
		node, err := nodefiles.Read(o.Root)
		if err != nil {
			return nil, &InputError{fmt.Errorf("read node files under %s: %w", o.Root, err)}
		}
		checks := nodechecks.Checks(nodechecks.Input{Node: node, Mode: o.Mode})
		if o.AWS {
			in, err := awsNodeInput(ctx, o, node)
			if err != nil {
				return nil, err
			}
			in.CloudRoutes = o.cloudRoutes(node)
			checks = append(checks, awschecks.Checks(in)...)
		}
		return checks, nil
	}
	kube := o.Kube
	if kube == nil {
		kube = genericclioptions.NewConfigFlags(true)
	}
	cfg, err := kube.ToRESTConfig()
	if err != nil {
		return nil, &InputError{fmt.Errorf("kubeconfig: %w", err)}
	}
	client, err := kubernetes.NewForConfig(clientConfig(cfg))
	if err != nil {
		return nil, &InputError{fmt.Errorf("kubeconfig: %w", err)}
	}
	return o.clusterChecks(ctx, client)
}

// clusterChecks builds the checks of cluster mode on client.
func (o Options) clusterChecks(ctx context.Context, client kubernetes.Interface) ([]preflight.Check, error) {
	if !o.AWS {
		return clusterchecks.Checks(clusterchecks.Input{Client: client, Mode: o.Mode}), nil
	}
	// The AWS input needs the Nodes now; the cluster checks reuse the list.
	nodes, err := listNodes(ctx, client)
	if err != nil {
		return nil, err
	}
	in, err := awsClusterInput(ctx, o, client, nodes)
	if err != nil {
		return nil, err
	}
	in.CloudRoutes = o.cloudRoutes(nil)
	checks := clusterchecks.Checks(clusterchecks.Input{Client: client, Mode: o.Mode, Nodes: nodes})
	return append(checks, awschecks.Checks(in)...), nil
}

// cloudRoutes resolves o.CloudRoutes; auto reads node's
// kube-controller-manager manifest when there is one.
func (o Options) cloudRoutes(node *nodefiles.Node) awschecks.CloudRoutes {
	switch o.CloudRoutes {
	case CloudRoutesOn:
		return awschecks.CloudRoutesOn
	case CloudRoutesOff:
		return awschecks.CloudRoutesOff
	}
	if on, known := nodechecks.KCMCloudRoutes(node); known {
		if on {
			return awschecks.CloudRoutesOn
		}
		return awschecks.CloudRoutesOff
	}
	return awschecks.CloudRoutesUnknown
}
