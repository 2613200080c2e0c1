package gather

import (
	"testing"

	"github.com/awsccmctl/awsccmctl/internal/nodefiles"
	"github.com/awsccmctl/awsccmctl/internal/preflight/awschecks"
)

func TestCloudRoutesFlag(t *testing.T) {
	kcm := func(args ...string) *nodefiles.Node {
		return &nodefiles.Node{StaticPods: map[string]*nodefiles.StaticPod{
			"kube-controller-manager": {Component: "kube-controller-manager", Flags: nodefiles.ParseFlags(append([]string{"kube-controller-manager"}, args...))},
		}}
	}
	cases := []struct {
		name, flag string
		node       *nodefiles.Node
		want       awschecks.CloudRoutes
	}{
		{"on wins over the manifest", "on", kcm("--allocate-node-cidrs=false"), awschecks.CloudRoutesOn},
		{"off wins over the manifest", "off", kcm("--allocate-node-cidrs=true"), awschecks.CloudRoutesOff},
		{"auto: CIDRs allocated, routes default on", "auto", kcm("--allocate-node-cidrs=true"), awschecks.CloudRoutesOn},
		{"auto: CIDRs allocated, routes off", "auto", kcm("--allocate-node-cidrs=true", "--configure-cloud-routes=false"), awschecks.CloudRoutesOff},
		{"auto: no CIDR allocation", "auto", kcm("--cloud-provider=aws"), awschecks.CloudRoutesOff},
		{"auto: unparseable flag is unknown", "auto", kcm("--allocate-node-cidrs=maybe"), awschecks.CloudRoutesUnknown},
		{"auto: no manifest (worker or cluster mode)", "auto", nil, awschecks.CloudRoutesUnknown},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := (Options{CloudRoutes: tc.flag}).cloudRoutes(tc.node); got != tc.want {
				t.Errorf("cloudRoutes = %q, want %q", got, tc.want)
			}
		})
	}
}
