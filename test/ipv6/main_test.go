package ipv6

import (
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
	clusterID = "six"
	vpcID     = "vpc-0six000000000001"
	region    = "us-west-2"
	cacheAge  = 2 * time.Second
)

var env struct {
	kube   kubernetes.Interface
	aws    *awsemu.Emulator
	gather metrics.KubeRegistry
}

func TestMain(m *testing.M) {
	os.Exit(testbed.Main(m, setup))
}

// setup starts the emulator under the least-privilege policy and one CCM
// with NodeIPFamilies = ipv6, as an operator of an IPv6-only cluster would
// configure it.
func setup(cp *testbed.ControlPlane) error {
	kube, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		return err
	}
	env.kube = kube
	if env.aws, err = awsemu.Serve(fixture()); err != nil {
		return fmt.Errorf("start AWS emulator: %w", err)
	}
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
	conf := fmt.Sprintf("[Global]\nRegion = %s\nVPC = %s\nKubernetesClusterID = %s\nNodeIPFamilies = ipv6\n", region, vpcID, clusterID)
	if err := os.WriteFile(cloudConfig, []byte(conf), 0o600); err != nil {
		return err
	}
	env.gather = metrics.NewKubeRegistry()
	ready := make(chan struct{})
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
		"--controllers=cloud-node,cloud-node-lifecycle",
		"--configure-cloud-routes=false",
		"--node-monitor-period=1s",
		"--node-status-update-frequency=5s",
		"--concurrent-node-syncs=10",
		"--aws-instance-cache-max-age=" + cacheAge.String(),
		"--aws-instance-absence-grace-period=10s",
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

// fixture: a dual-stack VPC with one IPv6-only subnet per zone; tests add
// instances.
func fixture() *awsemu.Fixture {
	tags := map[string]string{"kubernetes.io/cluster/" + clusterID: "owned"}
	return &awsemu.Fixture{
		Region: region,
		VPCs:   []awsemu.VPC{{ID: vpcID, CIDR: "10.0.0.0/16", Tags: tags}},
		Subnets: []awsemu.Subnet{
			{ID: "subnet-0six0000000000001", VPCID: vpcID, AvailabilityZone: "us-west-2a", IPv6CIDR: "2600:1f14:abc:100::/64", IPv6Native: true, Tags: tags},
			{ID: "subnet-0six0000000000002", VPCID: vpcID, AvailabilityZone: "us-west-2b", IPv6CIDR: "2600:1f14:abc:200::/64", IPv6Native: true, Tags: tags},
		},
	}
}
