package nodechecks

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/awsccmctl/awsccmctl/internal/nodefiles"
	"github.com/awsccmctl/awsccmctl/internal/preflight"
	"github.com/awsccmctl/awsccmctl/pkg/providerid"
)

const (
	kubeadmFlagsEnv = "/var/lib/kubelet/kubeadm-flags.env"
	kopsSysconfig   = "/etc/sysconfig/kubelet"
)

// privateDNSName matches EC2 IP-based host names (ip-10-0-1-10.ec2.internal,
// ip-10-0-1-10.us-west-2.compute.internal or a custom DHCP domain).
var privateDNSName = regexp.MustCompile(`^ip-[0-9]{1,3}-[0-9]{1,3}-[0-9]{1,3}-[0-9]{1,3}(\.|$)`)

func skipNoKubelet() preflight.Result {
	return preflight.Skip("no kubelet configuration found (kubelet.service and drop-ins, %s, /etc/default/kubelet, %s)", kubeadmFlagsEnv, kopsSysconfig)
}

// placeOf names where an Origin lives, for remediations.
func placeOf(o nodefiles.Origin) string {
	switch {
	case o.Variable != "":
		return fmt.Sprintf("%s in %s", o.Variable, o.File)
	case o.File != "":
		return "the ExecStart= line of " + o.File
	}
	return "the kubelet's command line"
}

// kubeletFix says how to put flag on the kubelet's command line for good.
func kubeletFix(k *nodefiles.Kubelet, verb, flag string) string {
	o := k.FlagFile()
	if cur, ok := k.Origin(flagName(flag)); ok {
		o = cur
	}
	restart := "then `systemctl restart kubelet`"
	if o.Variable == "" && o.File != "" {
		restart = "then `systemctl daemon-reload && systemctl restart kubelet`"
	}
	fix := fmt.Sprintf("%s %s in %s, %s", verb, flag, placeOf(o), restart)
	switch o.File {
	case kubeadmFlagsEnv:
		fix += "; for nodes that join later, add it to nodeRegistration.kubeletExtraArgs of the kubeadm JoinConfiguration"
	case kopsSysconfig:
		fix += "; kops regenerates this file: make the same change in the cluster or instance group spec (`kops edit cluster`) and roll the nodes"
	}
	return fix
}

// flagName returns the name of "--name=value".
func flagName(flag string) string {
	name, _, _ := strings.Cut(strings.TrimLeft(flag, "-"), "=")
	return name
}

func (r runner) kubeletCloudProvider() preflight.Result {
	k := r.in.Node.Kubelet
	if k == nil {
		return skipNoKubelet()
	}
	value, set := k.Flags.Get("cloud-provider")
	apiV, apiKnown := podVersion(r.in.Node.StaticPods[apiServer])
	switch {
	case value == "external":
		o, _ := k.Origin("cloud-provider")
		return preflight.Pass("kubelet has --cloud-provider=external (%s): new Nodes get the uninitialized taint until the CCM initialises them", placeOf(o))
	case value == "aws" && r.in.Mode == preflight.ModePreMigrate && inTreePossible(apiV, apiKnown):
		o, _ := k.Origin("cloud-provider")
		return preflight.Pass("kubelet has --cloud-provider=aws (%s): in-tree provider active; migrate-from-intree switches it to external", placeOf(o))
	case value == "aws":
		return preflight.Fail(kubeletFix(k, "change --cloud-provider=aws to", "--cloud-provider=external"),
			"kubelet has --cloud-provider=aws: the in-tree provider (removed in 1.27) is configured, not the external CCM")
	case !set || value == "":
		return preflight.Fail(kubeletFix(k, "add", "--cloud-provider=external"),
			"kubelet has no --cloud-provider=external: it does not add the node.cloudprovider.kubernetes.io/uninitialized taint, so a new node runs Pods before the CCM has labelled it and set its addresses and providerID")
	}
	return preflight.Fail(kubeletFix(k, "change --cloud-provider="+value+" to", "--cloud-provider=external"),
		"kubelet has --cloud-provider=%s; the kubelet accepts only \"\" and \"external\"", value)
}

func (r runner) kubeletNodeIdentity() preflight.Result {
	k := r.in.Node.Kubelet
	if k == nil {
		return skipNoKubelet()
	}
	fix := kubeletFix(k, "set", "--provider-id=aws:///$ZONE/$INSTANCE_ID") +
		"; the bootstrap script reads ZONE and INSTANCE_ID from IMDS (meta-data/placement/availability-zone, meta-data/instance-id); providerID in the kubelet configuration file works too"
	pid, from := "", ""
	if v, ok := k.Flags.Get("provider-id"); ok && v != "" {
		o, _ := k.Origin("provider-id")
		pid, from = v, "--provider-id in "+placeOf(o)
	} else if k.Config != nil && k.Config.ProviderID != "" {
		pid, from = k.Config.ProviderID, "providerID in "+k.ConfigPath
	}
	if pid != "" {
		if _, err := providerid.ParseCanonicalOrZoneless(pid); err != nil {
			return preflight.Fail(fix, "providerID %q (%s) is not aws:///<zone>/<instance-id>: %v", pid, from, err)
		}
		return preflight.Pass("providerID %s (%s)", pid, from)
	}
	if h, ok := k.Flags.Get("hostname-override"); ok && h != "" {
		if _, isID := providerid.InstanceIDFromNodeName(h); isID || privateDNSName.MatchString(h) {
			return preflight.Pass("no providerID, but the node name is pinned by --hostname-override=%s, which the CCM can resolve to an instance", h)
		}
		return preflight.Fail(fix, "--hostname-override=%s is neither the instance's private DNS name nor its instance ID, and no providerID is set: the CCM cannot find the instance", h)
	}
	return preflight.Fail(fix, "no providerID and no --hostname-override: the node name must equal the instance's private DNS name (or be its instance ID) for the CCM to find it")
}
