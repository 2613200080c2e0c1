package deploy

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/awsccmctl/awsccmctl/internal/install"
)

// TestECRDaemonSetRoundTrip: on the real apiserver, an install with the
// ecr-credential-provider DaemonSet creates it and records it in the
// install's inventory; re-applying without the option does not prune (no
// install does: the inventory keeps what it created), so the DaemonSet
// stays recorded, and uninstall removes it with the rest.
func TestECRDaemonSetRoundTrip(t *testing.T) {
	c, cs, mkns := bed(t)
	ctx := context.Background()
	ns := mkns("ccm-ecr")
	v := install.Values{Namespace: ns, ECRCredentialProvider: true}
	v.Default()
	objs, err := Objects(v)
	if err != nil {
		t.Fatal(err)
	}
	cleanup(t, c, objs)
	mustApply(t, c, objs)
	ds, err := cs.AppsV1().DaemonSets(ns).Get(ctx, install.ECRDaemonSetName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the DaemonSet was not created: %v", err)
	}
	if got := ds.Spec.Template.Spec.Containers[0].Command; len(got) == 0 || got[0] != "/ecr-credential-provider" {
		t.Errorf("command %q", got)
	}
	inv, err := c.Apply.ReadInventory(ctx, ns)
	if err != nil || inv == nil {
		t.Fatalf("inventory: %v", err)
	}
	found := false
	for _, u := range objs {
		if u.GetName() == install.ECRDaemonSetName {
			_, found = inv.Lookup(u)
		}
	}
	if !found {
		t.Error("the DaemonSet is not in the install's inventory")
	}

	// Without the option, the next apply keeps it, still recorded.
	plain := install.Values{Namespace: ns}
	plain.Default()
	plainObjs, err := Objects(plain)
	if err != nil {
		t.Fatal(err)
	}
	mustApply(t, c, plainObjs)
	if _, err := cs.AppsV1().DaemonSets(ns).Get(ctx, install.ECRDaemonSetName, metav1.GetOptions{}); err != nil {
		t.Errorf("apply without the option deleted the DaemonSet: %v", err)
	}
	if _, err := Uninstall(ctx, c, plainObjs, "", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.AppsV1().DaemonSets(ns).Get(ctx, install.ECRDaemonSetName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("uninstall left the DaemonSet: %v", err)
	}
}
