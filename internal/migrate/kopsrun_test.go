package migrate

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestKopsPlanIsNotRun: apply and rollback refuse a kops plan before they
// touch the cluster (no client here: a run that went on would panic),
// saying why and what to do instead.
func TestKopsPlanIsNotRun(t *testing.T) {
	p := &MigrationPlan{}
	p.Spec.Cluster.Distribution = DistributionKops
	r := &Runner{Plan: p}
	for name, run := range map[string]func() error{
		"apply":    func() error { return r.Apply(context.Background(), "") },
		"rollback": func() error { return r.Rollback(context.Background(), "") },
	} {
		var refused *RefusedError
		if err := run(); !errors.As(err, &refused) || !strings.Contains(err.Error(), "kops rolling-update") || !strings.Contains(err.Error(), "spec.kops.commands") {
			t.Errorf("%s: %v, want a refusal naming the rolling updates and the kops instructions", name, err)
		}
	}
	p.Spec.Cluster.Distribution = DistributionKubeadm
	if err := refuseKopsRun(p); err != nil {
		t.Errorf("kubeadm plan refused: %v", err)
	}
}
