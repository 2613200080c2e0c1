package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/component-base/metrics"

	"github.com/awsccmctl/awsccmctl/internal/awsapi"
	"github.com/awsccmctl/awsccmctl/internal/ccmapp"
	"github.com/awsccmctl/awsccmctl/internal/testbed"
	"github.com/awsccmctl/awsccmctl/pkg/awscloud"
	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// Timings of the CCM under test: short so the suite is quick, in the same
// proportions as production (status period > cache age; grace > cache age).
const (
	nodeMonitorPeriod  = time.Second
	statusUpdatePeriod = 5 * time.Second
	cacheMaxAge        = 2 * time.Second
	absenceGrace       = 6 * time.Second
	requestTimeout     = 2 * time.Second
	clusterID          = "itest"
	vpcID              = "vpc-0itest0000000001"
	region             = "us-east-1"
	// nodeGroupID is the cluster-tagged security group of every instance.
	nodeGroupID = "sg-0feed000000000001"
)

// env is the shared test environment: one control plane, one emulator and
// one CCM per package run.
var env struct {
	cp      *testbed.ControlPlane
	kube    kubernetes.Interface
	aws     *awsemu.Emulator
	metrics *awsapi.Metrics
	cloud   *awscloud.Cloud
	gather  metrics.KubeRegistry
}

func TestMain(m *testing.M) {
	os.Exit(testbed.Main(m, setup))
}

func setup(cp *testbed.ControlPlane) error {
	env.cp = cp
	kube, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		return err
	}
	env.kube = kube

	if env.aws, err = awsemu.Serve(fixture()); err != nil {
		return fmt.Errorf("start AWS emulator: %w", err)
	}
	// The CCM runs under the strictest policy it ships, as IAM would
	// evaluate it: a call it does not grant fails the test.
	if err := enforceLeastPrivilege(env.aws); err != nil {
		return err
	}

	// The SDK finds the emulator and static credentials through the same
	// environment variables an operator would set; IMDS is off, as for a
	// CCM running off EC2.
	for k, v := range env.aws.Env() {
		if err := os.Setenv(k, v); err != nil {
			return err
		}
	}
	cloudConfig := filepath.Join(cp.Dir, "cloud.conf")
	conf := fmt.Sprintf("[Global]\nRegion = %s\nVPC = %s\nKubernetesClusterID = %s\n", region, vpcID, clusterID)
	if err := os.WriteFile(cloudConfig, []byte(conf), 0o600); err != nil {
		return err
	}

	env.gather = metrics.NewKubeRegistry()
	ready := make(chan struct{})
	cmd, err := ccmapp.NewCommand(ccmapp.Options{
		Registerer:   env.gather,
		OnCloudError: func(err error) { panic(fmt.Sprintf("cloud provider failed: %v", err)) },
		Ready: func(m *awsapi.Metrics, c *awscloud.Cloud) {
			env.metrics, env.cloud = m, c
			close(ready)
		},
	})
	if err != nil {
		return err
	}
	cmd.SetArgs([]string{
		"--kubeconfig=" + cp.KubeconfigPath,
		"--cloud-provider=aws",
		"--cloud-config=" + cloudConfig,
		"--secure-port=0",
		"--leader-elect=true",
		"--configure-cloud-routes=false",
		"--node-monitor-period=" + nodeMonitorPeriod.String(),
		"--node-status-update-frequency=" + statusUpdatePeriod.String(),
		"--concurrent-node-syncs=10",
		"--kube-api-qps=500",
		"--kube-api-burst=1000",
		"--aws-instance-cache-max-age=" + cacheMaxAge.String(),
		"--aws-instance-absence-grace-period=" + absenceGrace.String(),
		"--aws-request-timeout=" + requestTimeout.String(),
		"-v=2",
	})
	go func() {
		if err := cmd.Execute(); err != nil {
			fmt.Fprintf(os.Stderr, "CCM exited: %v\n", err)
		}
	}()
	select {
	case <-ready:
	case <-time.After(60 * time.Second):
		return fmt.Errorf("the CCM did not build its cloud provider within 60s")
	}
	// Wait for the controllers to hold the lease.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return waitLeader(ctx, kube)
}

// enforceLeastPrivilege makes the emulator evaluate the CCM's requests
// (signed with the key of Env) against iam/ccm-policy-least-privilege.json
// for clusterID.
func enforceLeastPrivilege(e *awsemu.Emulator) error {
	doc, err := os.ReadFile(filepath.Join("..", "..", "iam", "ccm-policy-least-privilege.json"))
	if err != nil {
		return err
	}
	policy := strings.ReplaceAll(string(doc), awsapi.ClusterIDPlaceholder, clusterID)
	return e.AddPrincipal(awsemu.Principal{AccessKeyID: awsemu.DefaultAccessKeyID, Policies: []string{policy}})
}

// fixture is the emulator's starting state: the cluster's VPC and one
// subnet per zone; tests add instances.
func fixture() *awsemu.Fixture {
	tags := map[string]string{"kubernetes.io/cluster/" + clusterID: "owned"}
	return &awsemu.Fixture{
		Region: region,
		Zones:  []awsemu.Zone{{Name: "us-east-1a", ID: "use1-az1"}, {Name: "us-east-1b", ID: "use1-az2"}, {Name: "us-east-1c", ID: "use1-az4"}},
		VPCs:   []awsemu.VPC{{ID: vpcID, CIDR: "10.0.0.0/16", Tags: tags}},
		Subnets: []awsemu.Subnet{
			{ID: "subnet-0itest00000000001", VPCID: vpcID, AvailabilityZone: "us-east-1a", CIDR: "10.0.0.0/18", Tags: tags},
			{ID: "subnet-0itest00000000002", VPCID: vpcID, AvailabilityZone: "us-east-1b", CIDR: "10.0.64.0/18", Tags: tags},
			{ID: "subnet-0itest00000000003", VPCID: vpcID, AvailabilityZone: "us-east-1c", CIDR: "10.0.128.0/18", Tags: tags},
			// Private subnets for internal load balancers.
			{ID: "subnet-0itest00000000011", VPCID: vpcID, AvailabilityZone: "us-east-1a", CIDR: "10.0.192.0/20",
				Tags: map[string]string{"kubernetes.io/cluster/" + clusterID: "shared", "kubernetes.io/role/internal-elb": "1", "Name": "itest-private-a"}},
			{ID: "subnet-0itest00000000012", VPCID: vpcID, AvailabilityZone: "us-east-1b", CIDR: "10.0.208.0/20",
				Tags: map[string]string{"kubernetes.io/cluster/" + clusterID: "shared", "kubernetes.io/role/internal-elb": "1", "Name": "itest-private-b"}},
		},
		// The node subnets are public (main table through an internet
		// gateway); the private ones have their own table without one.
		RouteTables: []awsemu.RouteTable{
			{ID: "rtb-0itest000000000001", VPCID: vpcID, Main: true, Routes: []awsemu.Route{{DestinationCIDR: "0.0.0.0/0", GatewayID: "igw-0itest000000000001"}}},
			{ID: "rtb-0itest000000000002", VPCID: vpcID, SubnetIDs: []string{"subnet-0itest00000000011", "subnet-0itest00000000012"}},
		},
		SecurityGroups: []awsemu.SecurityGroup{
			{ID: nodeGroupID, Name: "itest-nodes", Description: "nodes", VPCID: vpcID, Tags: tags},
		},
	}
}
