//go:build linux

package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The preflight scenario: `awsccmctl preflight` in cluster mode (the
// kubeconfig, no --node) with its AWS checks against the emulator, over
// the group's joined cluster. Wall time of the command and the requests
// the apiserver served meanwhile. Upstream has no preflight.

// awsccmctlBinary is $AWSCCMCTL_BINARY or <repo>/_output/bin/awsccmctl.
func awsccmctlBinary() (string, error) {
	p := os.Getenv("AWSCCMCTL_BINARY")
	if p == "" {
		p = filepath.Join("..", "..", "_output", "bin", "awsccmctl")
	}
	p, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("%s: %w; run hack/build.sh", p, err)
	}
	return p, nil
}

// preflightReport is the part of preflight's -o json the bench reads.
type preflightReport struct {
	Summary struct {
		Pass, Warn, Fail, Skip int
	} `json:"summary"`
	Findings []struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	} `json:"findings"`
}

func runPreflight(b *testing.B, r *result) {
	ctx := context.Background()
	bin, err := awsccmctlBinary()
	if err != nil {
		b.Fatal(err)
	}
	out := filepath.Join(env.outDir, fmt.Sprintf("%d-preflight.json", r.group.nodes))
	args := []string{"preflight", "--kubeconfig=" + env.cp.KubeconfigPath, "--cloud-config=" + env.cloudConfig, "--cloud-routes=off", "-o", "json"}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), env.aws.Env().List()...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr

	req0 := apiserverRequests(b)
	start := time.Now()
	runErr := cmd.Run()
	took := time.Since(start)
	reqs := req0.since(b)
	_ = os.WriteFile(out, stdout.Bytes(), 0o644)
	// Exit 1 is "checks failed" (some checks cannot pass off EC2); 2
	// (usage) and 3 (unreachable) mean the run did not happen.
	var exit *exec.ExitError
	if runErr != nil && (!errors.As(runErr, &exit) || exit.ExitCode() > 1) {
		b.Fatalf("awsccmctl %s: %v\n%s", strings.Join(args, " "), runErr, stderr.String())
	}
	var rep preflightReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		b.Fatalf("preflight -o json: %v", err)
	}
	var failed []string
	for _, f := range rep.Findings {
		if f.Status == "fail" {
			failed = append(failed, f.ID)
		}
	}
	r.note(b, "awsccmctl preflight --cloud-routes=off -o json over %d Nodes: %d pass, %d warn, %d fail (%s), %d skip; report %s",
		env.nodes.count(), rep.Summary.Pass, rep.Summary.Warn, rep.Summary.Fail, strings.Join(failed, ", "), rep.Summary.Skip, out)
	r.record(b, "seconds", fmt.Sprintf("cluster-mode preflight over %d Nodes: wall s", env.nodes.count()), "%.2f", took.Seconds())
	r.note(b, "preflight: the apiserver's requests meanwhile: %s", reqs)
	r.record(b, "kube_requests", "cluster-mode preflight: requests the apiserver served (apiserver_request_total, all clients)", "%.0f", reqs.total())
}
