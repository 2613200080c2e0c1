package awschecks

import (
	"strings"
	"testing"

	"github.com/awsccmctl/awsccmctl/internal/preflight"
)

func TestNodeNames(t *testing.T) {
	cases := []struct {
		name   string
		nodes  []string
		status preflight.Status
		text   string
		calls  int // DescribeInstances calls beyond the shared providerID lookup
	}{
		{"every Node has a providerID", nil, pass, "every Node has a providerID", 0},
		{"found by private DNS name and by instance ID", []string{"ip-10-0-1-10.ec2.internal", demoB}, pass,
			"the CCM finds the instance of all 2 Nodes without a providerID by their names (1 by instance ID, 1 by private DNS name)", 2},
		{"a stopped instance is still found", []string{demoStopped}, pass, "all 1 Nodes", 1},
		{"custom hostname and a terminated instance are lost", []string{"ip-10-0-1-10.ec2.internal", "worker-1.corp.example.com", demoTerminated}, fail,
			"2 of 3 Nodes without a providerID match no instance by name (neither an instance ID nor the private DNS name of a live instance): worker-1.corp.example.com, " + demoTerminated, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := start(t, nil, true)
			in := e.baseInput()
			in.InstanceIDs, in.ControlPlaneInstanceIDs = nil, nil // only the name lookups call DescribeInstances
			in.NodesWithoutProviderID = tc.nodes
			f := run(t, in)[IDNodeNames]
			if f.Status != tc.status || !strings.Contains(f.Message, tc.text) {
				t.Errorf("got %s: %s\nwant %s containing %q", f.Status, f.Message, tc.status, tc.text)
			}
			if tc.status == fail && !strings.Contains(f.Remediation, "--provider-id=aws:///<zone>/<instance-id>") {
				t.Errorf("remediation %q does not name --provider-id", f.Remediation)
			}
			if got := e.srv.CallCounts()["ec2:DescribeInstances"]; got != tc.calls {
				t.Errorf("DescribeInstances calls = %d, want %d", got, tc.calls)
			}
		})
	}
}
