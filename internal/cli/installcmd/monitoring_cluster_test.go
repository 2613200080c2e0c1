package installcmd_test

import (
	"strings"
	"testing"

	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
)

// TestApplyMonitoringWithoutCRDs: install apply --monitoring on a cluster
// without prometheus-operator's CRDs exits 1, names the missing kinds and
// the two ways out, and applies nothing (no install to uninstall after).
func TestApplyMonitoringWithoutCRDs(t *testing.T) {
	kubeconfig, ns := cluster(t)
	flags := []string{"--kubeconfig", kubeconfig, "--namespace", ns}
	_, _, err := run(t, append([]string{"install", "apply", "--monitoring", "--no-detect"}, flags...)...)
	if exitcode.Of(err) != exitcode.Failed {
		t.Fatalf("exit code %d (%v), want %d", exitcode.Of(err), err, exitcode.Failed)
	}
	for _, want := range []string{"ServiceMonitor (monitoring.coreos.com/v1)", "PrometheusRule (monitoring.coreos.com/v1)", "nothing was applied", "prometheus-operator's CRDs", "drop --monitoring"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	_, _, err = run(t, append([]string{"install", "uninstall"}, flags...)...)
	if exitcode.Of(err) != exitcode.Mismatch {
		t.Errorf("uninstall after the refused apply: %v, want exit %d (no install recorded: nothing was applied)", err, exitcode.Mismatch)
	}
}
