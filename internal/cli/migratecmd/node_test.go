package migratecmd

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/awsccmctl/awsccmctl/internal/childproc"
)

// TestNodeReportsTheRunningKubelet: the phases that change the kubelet's
// flags report what the running kubelet runs, found by the healthz port
// its files configure; here nothing listens there, and the report and the
// operator are told so instead of the phase passing for a restart. The
// control-plane phases do not look.
func TestNodeReportsTheRunningKubelet(t *testing.T) {
	ctx := context.Background()
	free, err := childproc.FreePort(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		phase, scope string
		looks        bool
	}{
		{"kubelet-external", "", true},
		{"restore", "kubelet", true},
		{"control-plane-external", "", false},
		{"restore", "control-plane", false},
	} {
		t.Run(tc.phase+"/"+tc.scope, func(t *testing.T) {
			root := t.TempDir()
			if err := os.CopyFS(root, os.DirFS(filepath.Join("..", "..", "nodefiles", "testdata", "kubeadm-1.26-intree"))); err != nil {
				t.Fatal(err)
			}
			cfg := filepath.Join(root, "var", "lib", "kubelet", "config.yaml")
			data, err := os.ReadFile(cfg)
			if err != nil {
				t.Fatal(err)
			}
			data = bytes.Replace(data, []byte("healthzPort: 10248"), []byte("healthzPort: "+strconv.Itoa(free)), 1)
			if err := os.WriteFile(cfg, data, 0o600); err != nil {
				t.Fatal(err)
			}
			var out, errOut bytes.Buffer
			err = runNode(ctx, nodeOptions{Root: root, Phase: tc.phase, Scope: tc.scope, NodeName: "n1"}, "", "json", Streams{Out: &out, Err: &errOut})
			if err != nil {
				t.Fatalf("runNode: %v\n%s", err, errOut.String())
			}
			var got nodeOutput
			if err := json.Unmarshal(out.Bytes(), &got); err != nil || got.Report == nil {
				t.Fatalf("output %q: %v", out.String(), err)
			}
			want := "no kubelet is running: nothing listens on its healthz port " + strconv.Itoa(free)
			switch {
			case tc.looks && (got.Report.Kubelet != nil || got.Report.KubeletError != want):
				t.Errorf("report kubelet %+v, error %q; want %q", got.Report.Kubelet, got.Report.KubeletError, want)
			case tc.looks && !strings.Contains(errOut.String(), "the running kubelet could not be read: "+want):
				t.Errorf("stderr does not tell the operator:\n%s", errOut.String())
			case !tc.looks && (got.Report.Kubelet != nil || got.Report.KubeletError != ""):
				t.Errorf("phase %s looked at the kubelet: %+v %q", tc.phase, got.Report.Kubelet, got.Report.KubeletError)
			}
		})
	}
}
