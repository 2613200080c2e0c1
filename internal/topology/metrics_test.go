package topology

import (
	"strings"
	"testing"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/testutil"
)

// TestDenialSeriesStartAtZero: both series exist before the first denial,
// so an alert on increase() sees the first one (docs/reference/alerts.md).
func TestDenialSeriesStartAtZero(t *testing.T) {
	reg := metrics.NewKubeRegistry()
	NewMetrics(reg)
	want := "# HELP aws_ccm_instance_topology_denied_total [ALPHA] Joining Nodes initialized without network-node labels because ec2:DescribeInstanceTopology is denied, by whether their instance type matches SupportedTopologyInstanceTypePattern (required: true also gets a Warning event).\n" +
		"# TYPE aws_ccm_instance_topology_denied_total counter\n" +
		"aws_ccm_instance_topology_denied_total{required=\"false\"} 0\n" +
		"aws_ccm_instance_topology_denied_total{required=\"true\"} 0\n"
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "aws_ccm_instance_topology_denied_total"); err != nil {
		t.Error(err)
	}
}
