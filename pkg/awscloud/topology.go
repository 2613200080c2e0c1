package awscloud

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	corev1 "k8s.io/api/core/v1"
	cloudproviderapi "k8s.io/cloud-provider/api"
	"k8s.io/utils/clock"

	"github.com/awsccmctl/awsccmctl/internal/instances"
	"github.com/awsccmctl/awsccmctl/internal/topology"
	"github.com/awsccmctl/awsccmctl/pkg/cloudconfig"
)

// newTopology builds the topology reader with the cloud config's required
// pattern (validated by cloudconfig; defaulted to upstream's).
func newTopology(cc *cloudconfig.Config, c *ec2.Client, clk clock.PassiveClock, m *topology.Metrics) (*topology.Reader, error) {
	var required *regexp.Regexp
	if pat := cc.Global.SupportedTopologyInstanceTypePattern; pat != "" {
		re, err := regexp.Compile(pat)
		if err != nil {
			return nil, fmt.Errorf("cloud config [Global] SupportedTopologyInstanceTypePattern: %w", err)
		}
		required = re
	}
	return topology.New(topology.NewEC2(c), topology.Options{Required: required, Clock: clk, Metrics: m}), nil
}

// topologyLabels adds the network-node-layer labels of inst to labels. Only
// a Node the cloud node controller is initializing is asked about: the
// controller applies AdditionalLabels only then, while it calls
// InstanceMetadata for every Node on each status pass.
func (i *instancesV2) topologyLabels(ctx context.Context, node *corev1.Node, inst *instances.Instance, labels map[string]string) error {
	if !uninitialized(node) {
		return nil
	}
	if _, ok := node.Labels[NetworkNodeLabelPrefix+"1"]; ok {
		return nil // set by someone else (or upstream): keep them
	}
	nodes, err := i.c.topology.NetworkNodes(ctx, inst.ID, inst.Type)
	var req *topology.RequiredError
	if errors.As(err, &req) {
		fix := "If instances of this type have no topology, remove the type from the cloud config's SupportedTopologyInstanceTypePattern."
		if errors.Is(err, topology.ErrNoTopology) {
			fix = "EC2 lists topology only for running instances; the CCM retries. " + fix
		}
		i.c.events.Eventf(node, corev1.EventTypeWarning, ReasonTopologyMissing,
			"The Node stays uninitialized: %v. %s", err, fix)
		return err
	}
	// A missing permission blocks no Node: it joins without the labels
	// (as upstream's does), and is told why.
	var denied *topology.DeniedError
	if errors.As(err, &denied) {
		i.c.events.Eventf(node, corev1.EventTypeWarning, ReasonTopologyDenied,
			"The Node is initialized without its network-node labels (%s*): %v. "+
				"Grant ec2:DescribeInstanceTopology to the CCM's role (see iam/); Nodes that join from then on get the labels (the CCM asks again within %s), this one keeps none.",
			NetworkNodeLabelPrefix, err, topology.DeniedFor)
		return nil
	}
	if err != nil {
		return err
	}
	for n, nn := range nodes {
		labels[NetworkNodeLabelPrefix+strconv.Itoa(n+1)] = nn
	}
	return nil
}

// uninitialized: the Node still has the cloud provider's taint.
func uninitialized(node *corev1.Node) bool {
	for _, t := range node.Spec.Taints {
		if t.Key == cloudproviderapi.TaintExternalCloudProvider {
			return true
		}
	}
	return false
}
