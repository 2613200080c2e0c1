package rbac

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"

	"github.com/awsccmctl/awsccmctl/internal/leaderlease"
)

// TestLeaseReleasedOnSIGTERM: the CCM binary, with the rendered RBAC,
// stops on SIGTERM (as the kubelet stops a Pod), clears the holder of its
// leader Lease and exits 0, so the next CCM takes the Lease at its first
// try instead of a lease duration (15 s) after the last renewal, which is
// what every rolling update of the DaemonSet used to cost.
func TestLeaseReleasedOnSIGTERM(t *testing.T) {
	objs := rendered(t)
	ctx := context.Background()
	cs := kubernetes.NewForConfigOrDie(env.cp.Config)
	applyRBAC(t, objs)
	ns, name := leaseOf(t, objs)
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	leads := func(c *ccm, not string) string {
		t.Helper()
		var holder string
		waitFor(t, 60*time.Second, "a CCM leads Lease "+ns+"/"+name, func(ctx context.Context) (bool, error) {
			r, err := leaderlease.Get(ctx, cs, ns, name)
			if c.proc.Exited() {
				t.Fatalf("the CCM exited: %v", c.proc.ExitError(4000))
			}
			holder = r.Holder
			return err == nil && strings.HasPrefix(holder, host+"_") && holder != not, err
		})
		return holder
	}

	first := startCCM(t, objs, "ccm-lease")
	held := leads(first, "")

	// A second CCM on this host cannot serve the secure port the first
	// holds and exits before it leads: it must not clear the first's
	// Lease, whose holder carries the same host name. (It fails while its
	// configuration is built, before any release could run; the release's
	// own guard, cloud.Led, covers a run that fails later.)
	clash := startCCMWith(t, objs, "ccm-lease-clash", map[string]string{"secure-port": strconv.Itoa(first.port)})
	waitFor(t, 60*time.Second, "the clashing CCM exits", func(context.Context) (bool, error) { return clash.proc.Exited(), nil })
	if status := clash.proc.ExitStatus(); strings.HasSuffix(status, "exited with status 0") {
		t.Errorf("a CCM that cannot serve its port: %s, want a failure", status)
	}
	if r, err := leaderlease.Get(ctx, cs, ns, name); err != nil || r.Holder != held {
		t.Fatalf("after a second CCM on this host failed to start, the Lease is held by %q (%v), want still %q", r.Holder, err, held)
	}

	stopped := time.Now()
	first.stopCh() // SIGTERM; SIGKILL after 5 s
	if took := time.Since(stopped); took >= 5*time.Second {
		t.Errorf("the CCM took %s to stop on SIGTERM and was killed", took.Round(time.Millisecond))
	}
	if status := first.proc.ExitStatus(); !strings.HasSuffix(status, "exited with status 0") {
		t.Errorf("on SIGTERM: %s, want status 0", status)
	}
	r, err := leaderlease.Get(ctx, cs, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	if r.Holder != "" {
		t.Errorf("after SIGTERM the Lease is held by %q (was %q): not released", r.Holder, held)
	}
	if log, _ := os.ReadFile(first.log); !strings.Contains(string(log), "Released the leader Lease") {
		t.Errorf("the CCM's log does not say it released the Lease")
	}

	second := startCCM(t, objs, "ccm-lease-2")
	leads(second, held)
	t.Logf("the next CCM led %s after the first was stopped (the lease duration it no longer waits for: %s)",
		time.Since(stopped).Round(100*time.Millisecond), r.DurationOrDefault())
	l, err := cs.CoordinationV1().Leases(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if l.Spec.LeaseTransitions == nil || *l.Spec.LeaseTransitions < 1 {
		t.Errorf("lease transitions %v, want the hand-over counted", l.Spec.LeaseTransitions)
	}
}

// leaseOf is the leader Lease the rendered CCM's flags name.
func leaseOf(t *testing.T, objs []*unstructured.Unstructured) (namespace, name string) {
	t.Helper()
	ds := convert[appsv1.DaemonSet](t, ofKind(objs, "DaemonSet")[0])
	for _, a := range ds.Spec.Template.Spec.Containers[0].Args {
		if v, ok := strings.CutPrefix(a, "--leader-elect-resource-name="); ok {
			name = v
		}
		if v, ok := strings.CutPrefix(a, "--leader-elect-resource-namespace="); ok {
			namespace = v
		}
	}
	if namespace == "" || name == "" {
		t.Fatalf("the rendered args name no leader Lease: %v", ds.Spec.Template.Spec.Containers[0].Args)
	}
	return namespace, name
}
