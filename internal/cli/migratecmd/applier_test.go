package migratecmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"

	"github.com/awsccmctl/awsccmctl/internal/install"
	"github.com/awsccmctl/awsccmctl/internal/install/apply"
	"github.com/awsccmctl/awsccmctl/internal/install/deploy"
	"github.com/awsccmctl/awsccmctl/internal/testbed"
	"github.com/awsccmctl/awsccmctl/internal/testbed/fakekubelet"
)

// TestMain shares one real control plane among the tests that need one;
// the binary is also the fake kubelet of the node tests.
func TestMain(m *testing.M) {
	fakekubelet.Serve()
	os.Exit(testbed.Main(m, nil))
}

// TestRecordingApplier: the migration's CCM is recorded as install apply
// records it, and its removal deletes the record; with nothing recorded
// anywhere (a CCM a migration applied before installs were recorded) the
// removal deletes the labelled objects; with an install recorded in
// another namespace it refuses and deletes nothing.
func TestRecordingApplier(t *testing.T) {
	cp := testbed.Get(t)
	ctx := context.Background()
	cs := kubernetes.NewForConfigOrDie(cp.Config)
	rendered := func(prefix string) ([]*unstructured.Unstructured, string) {
		ns := fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano()%1e9)
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		v := install.Values{Namespace: ns}
		v.Default()
		objs, err := deploy.Objects(v)
		if err != nil {
			t.Fatal(err)
		}
		return objs, ns
	}
	a, err := newApplier(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	c := a.(recordingApplier).c
	serviceAccount := func(ns string) error {
		_, err := cs.CoreV1().ServiceAccounts(ns).Get(ctx, install.ServiceAccountName, metav1.GetOptions{})
		return err
	}

	objsA, nsA := rendered("ccm-a")
	objsB, _ := rendered("ccm-b")
	if _, err := a.Apply(ctx, objsA, apply.Options{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = a.Uninstall(ctx, objsA, apply.Options{}) })
	if inv, err := c.Apply.ReadInventory(ctx, nsA); err != nil || inv == nil || len(inv.Members) != len(objsA) {
		t.Fatalf("the migration's install is not recorded: %+v, %v", inv, err)
	}

	// Recorded in nsA: the removal of an install in nsB is refused.
	if _, err := a.Uninstall(ctx, objsB, apply.Options{}); !errors.As(err, new(*deploy.MismatchError)) || errors.Is(err, deploy.ErrNotInstalled) {
		t.Errorf("uninstall beside a recorded install: %v, want a mismatch", err)
	}
	if err := serviceAccount(nsA); err != nil {
		t.Errorf("the refused uninstall touched the install: %v", err)
	}

	// No record anywhere: the labelled objects go all the same.
	if err := cs.CoreV1().ConfigMaps(nsA).Delete(ctx, apply.InventoryName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	rs, err := a.Uninstall(ctx, objsA, apply.Options{})
	if err != nil {
		t.Fatalf("uninstall with nothing recorded: %v", err)
	}
	for _, r := range rs {
		if r.Action != "deleted" {
			t.Errorf("uninstall with nothing recorded: %s %s, want deleted", r.Ref, r.Action)
		}
	}
	if err := serviceAccount(nsA); !apierrors.IsNotFound(err) {
		t.Errorf("the ServiceAccount is left: %v", err)
	}

	// Recorded again, the removal deletes the record too.
	if _, err := a.Apply(ctx, objsA, apply.Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Uninstall(ctx, objsA, apply.Options{}); err != nil {
		t.Fatal(err)
	}
	if inv, err := c.Apply.ReadInventory(ctx, nsA); err != nil || inv != nil {
		t.Errorf("the record is left after uninstall: %+v, %v", inv, err)
	}
}
