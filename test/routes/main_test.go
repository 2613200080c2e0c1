package routes

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

const (
	clusterID = "rtest"
	vpcID     = "vpc-0rtest0000000001"
	region    = "us-east-1"
	subnetID  = "subnet-0rtest00000000001"
	// tableID is the cluster-tagged route table the CCM manages.
	tableID = "rtb-0rtest000000000001"
	// clusterCIDRs is the CCM's --cluster-cidr (dual stack).
	clusterCIDRs = "10.244.0.0/16,fd00:10:244::/56"
	// syncPeriod is --route-reconciliation-period.
	syncPeriod = time.Second
)

// env is one control plane, one emulator and one CCM per package run.
var env struct {
	cp   *testbed.ControlPlane
	kube kubernetes.Interface
	aws  *awsemu.Emulator
	// gather is the registry the CCM's route metrics are in.
	gather metrics.KubeRegistry
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
	// The CCM runs under the least-privilege policy, as IAM would
	// evaluate it.
	doc, err := os.ReadFile(filepath.Join("..", "..", "iam", "ccm-policy-least-privilege.json"))
	if err != nil {
		return err
	}
	policy := strings.ReplaceAll(string(doc), awsapi.ClusterIDPlaceholder, clusterID)
	if err := env.aws.AddPrincipal(awsemu.Principal{AccessKeyID: awsemu.DefaultAccessKeyID, Policies: []string{policy}}); err != nil {
		return err
	}
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
	ready := make(chan struct{})
	env.gather = metrics.NewKubeRegistry()
	cmd, err := ccmapp.NewCommand(ccmapp.Options{
		Registerer:   env.gather,
		OnCloudError: func(err error) { panic(fmt.Sprintf("cloud provider failed: %v", err)) },
		Ready:        func(*awsapi.Metrics, *awscloud.Cloud) { close(ready) },
	})
	if err != nil {
		return err
	}
	cmd.SetArgs([]string{
		"--kubeconfig=" + cp.KubeconfigPath,
		"--cloud-provider=aws",
		"--cloud-config=" + cloudConfig,
		"--secure-port=0",
		"--leader-elect=false",
		"--controllers=route",
		"--configure-cloud-routes=true",
		"--cluster-cidr=" + clusterCIDRs,
		"--route-reconciliation-period=" + syncPeriod.String(),
		"--aws-instance-cache-max-age=2s",
		"--aws-instance-absence-grace-period=6s",
		"-v=2",
	})
	go func() {
		if err := cmd.Execute(); err != nil {
			fmt.Fprintf(os.Stderr, "CCM exited: %v\n", err)
		}
	}()
	select {
	case <-ready:
		return nil
	case <-time.After(60 * time.Second):
		return fmt.Errorf("the CCM did not build its cloud provider within 60s")
	}
}

// fixture: the cluster's VPC with one subnet and its cluster-tagged route
// table, which holds the default route and the foreign routes of
// TestForeignRoutesNeverTouched from the start.
func fixture() *awsemu.Fixture {
	tags := map[string]string{"kubernetes.io/cluster/" + clusterID: "owned"}
	return &awsemu.Fixture{
		Region:  region,
		Zones:   []awsemu.Zone{{Name: "us-east-1a", ID: "use1-az1"}},
		VPCs:    []awsemu.VPC{{ID: vpcID, CIDR: "10.0.0.0/16", Tags: tags}},
		Subnets: []awsemu.Subnet{{ID: subnetID, VPCID: vpcID, AvailabilityZone: "us-east-1a", CIDR: "10.0.0.0/18", Tags: tags}},
		RouteTables: []awsemu.RouteTable{{
			ID: tableID, VPCID: vpcID, Main: true, Tags: tags,
			Routes: append([]awsemu.Route{{DestinationCIDR: "0.0.0.0/0", GatewayID: "igw-0rtest000000000001"}}, foreignRoutes...),
		}},
		Instances: []awsemu.Instance{{ID: foreignInstance, Type: "t3.micro", SubnetID: subnetID, PrivateIP: "10.0.0.250",
			Tags: map[string]string{"Name": "not-a-node"}}},
		// Room for the tests' routes; TestRouteLimit lowers it.
		RouteLimit: 100,
	}
}

// foreignInstance is an instance of the VPC that is no Node.
const foreignInstance = "i-0f0f0f0f0f0f0f0f1"

// foreignRoutes must stay as they are: into the cluster CIDRs to a
// gateway, to a foreign instance, blackholed to a gateway; and outside
// them.
var foreignRoutes = []awsemu.Route{
	{DestinationCIDR: "10.244.250.0/24", GatewayID: "vgw-0f0f0f0f0f0f0f0f1"},
	{DestinationCIDR: "10.244.251.0/24", InstanceID: foreignInstance},
	{DestinationCIDR: "10.244.252.0/24", GatewayID: "igw-0f0f0f0f0f0f0f0f2", State: awsemu.RouteStateBlackhole},
	{DestinationCIDR: "192.168.0.0/24", InstanceID: foreignInstance},
}

// syncCtx bounds a test's waits.
func syncCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}
