package awschecks

import (
	"context"
	"net"
	"net/http"
	"testing"

	"github.com/awsccmctl/awsccmctl/internal/awsapi"
	"github.com/awsccmctl/awsccmctl/internal/preflight"
	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// closedURL is an address nothing listens on: connections are refused.
func closedURL(t *testing.T) string {
	t.Helper()
	l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return "http://" + addr
}

// TestUnreachableAWS: a check fails as unreachable (the "cannot reach"
// exit code) only when AWS did not answer: a refused connection or a
// service failing with 5xx through its retries. An answer, even a refusal
// or throttling, is a finding to fix, never "unreachable".
func TestUnreachableAWS(t *testing.T) {
	cases := []struct {
		name   string
		env    func(t *testing.T) map[string]string
		server func(*awsemu.Server)
		// unreachable: the check IDs that fail as unreachable; failed:
		// those that fail with an answer.
		unreachable, failed []string
	}{
		{name: "STS connection refused", env: func(t *testing.T) map[string]string {
			return map[string]string{"AWS_ENDPOINT_URL_STS": closedURL(t)}
		}, unreachable: []string{IDIdentity}},
		{name: "EC2 down (503)", server: func(s *awsemu.Server) {
			s.InjectFault(awsemu.Fault{Service: "ec2", HTTPStatus: http.StatusServiceUnavailable})
		}, unreachable: []string{IDClusterID, IDInstancesExist, IDIMDS}},
		{name: "EC2 internal error (500)", server: func(s *awsemu.Server) {
			s.InjectFault(awsemu.Fault{Service: "ec2", Action: "DescribeInstances", HTTPStatus: http.StatusInternalServerError})
		}, unreachable: []string{IDClusterID, IDInstancesExist, IDIMDS}},
		{name: "EC2 denies (403)", server: func(s *awsemu.Server) {
			s.InjectFault(awsemu.Fault{Service: "ec2", Action: "DescribeInstances", Code: "UnauthorizedOperation", HTTPStatus: http.StatusForbidden})
		}, failed: []string{IDClusterID, IDInstancesExist}},
		{name: "EC2 throttles", server: func(s *awsemu.Server) {
			s.InjectFault(awsemu.Throttle("ec2", 1))
		}, failed: []string{IDClusterID, IDInstancesExist}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := awsemu.StartT(t, awsemu.DemoFixture())
			e.Env().Set(t)
			if tc.env != nil {
				for k, v := range tc.env(t) {
					t.Setenv(k, v)
				}
			}
			if tc.server != nil {
				tc.server(e.Server)
			}
			// One attempt: the classification is the same after retries,
			// and the test need not wait out the backoff.
			o := awsapi.Options{Region: "us-east-1", MaxAttempts: 1}
			clients, err := awsapi.NewClients(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			iamClient, err := awsapi.NewIAM(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			in := Input{AWS: NewAPI(clients, iamClient), InstanceIDs: []string{demoA, demoB}, ControlPlaneInstanceIDs: []string{demoA},
				HostNetwork: true, Mode: preflight.ModePreInstall}
			got := run(t, in)
			want := map[string]bool{}
			for _, id := range tc.unreachable {
				want[id] = true
				// A warning-severity check reports warn, still unreachable.
				if f := got[id]; (f.Status != fail && f.Status != warn) || !f.Unreachable {
					t.Errorf("%s: %s unreachable=%v (%s), want an unreachable failure", id, f.Status, f.Unreachable, f.Message)
				} else if id != IDIdentity && f.Remediation != fixAWSDown {
					t.Errorf("%s: fix %q, want %q", id, f.Remediation, fixAWSDown)
				}
			}
			for _, id := range tc.failed {
				if f := got[id]; f.Status != fail || f.Unreachable {
					t.Errorf("%s: %s unreachable=%v (%s), want a failure that is an answer", id, f.Status, f.Unreachable, f.Message)
				}
			}
			for id, f := range got {
				if f.Unreachable && !want[id] {
					t.Errorf("%s: unreachable (%s), not expected", id, f.Message)
				}
			}
		})
	}
}
