package chart

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/awsccmctl/awsccmctl/internal/testbed"
)

// Helm's ownership metadata (what it writes and what it checks before
// taking over an existing object).
const (
	managedByLabel          = "app.kubernetes.io/managed-by"
	releaseNameAnnotation   = "meta.helm.sh/release-name"
	releaseNSAnnotation     = "meta.helm.sh/release-namespace"
	ownershipRefusalMessage = "exists and cannot be imported into the current release: invalid ownership metadata"
)

// TestChartCheckReleaseOwnership installs the tiny chart on the test bed's
// apiserver, as `helm install` does, and checks what the coexistence of
// awsccmctl and Helm rests on: Helm marks what it creates, refuses an
// object another release or awsccmctl owns, and uninstall removes only
// its own.
func TestChartCheckReleaseOwnership(t *testing.T) {
	cp := testbed.Get(t)
	dir := tinyChart(t)
	ctx := t.Context()
	cs := kubernetes.NewForConfigOrDie(cp.Config)
	kc := cp.KubeconfigPath
	const ns, otherNS = "chart-smoke", "chart-smoke-owned"
	for _, name := range []string{ns, otherNS} {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	rel, err := Install(t, dir, []byte("greeting: hi\n"), "first", ns, kc)
	if err != nil {
		t.Fatalf("install: %v", err)
	}
	if rel.Status != "deployed" || rel.Revision != 1 || rel.Notes != "Installed first in chart-smoke.\n" {
		t.Errorf("install: %+v, want revision 1 deployed with the notes", rel)
	}
	cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "tiny", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the release's ConfigMap: %v", err)
	}
	if cm.Labels[managedByLabel] != "Helm" || cm.Annotations[releaseNameAnnotation] != "first" || cm.Annotations[releaseNSAnnotation] != ns {
		t.Errorf("ConfigMap labels %v, annotations %v: want Helm's ownership metadata for release first", cm.Labels, cm.Annotations)
	}
	if cm.Data["greeting"] != "hi" {
		t.Errorf("greeting = %q, want hi", cm.Data["greeting"])
	}
	// Releases are kept as Secrets, as helm's default driver keeps them.
	if _, err := cs.CoreV1().Secrets(ns).Get(ctx, "sh.helm.release.v1.first.v1", metav1.GetOptions{}); err != nil {
		t.Errorf("release record: %v", err)
	}

	// Another release over the same object: refused, nothing recorded.
	_, err = Install(t, dir, nil, "second", ns, kc)
	wantRefusal(t, err, `ConfigMap "tiny" in namespace "chart-smoke" `+ownershipRefusalMessage,
		`annotation validation error: key "meta.helm.sh/release-name" must equal "second": current value is "first"`)
	if records := releaseRecords(t, cs, ns, "second"); len(records) != 0 {
		t.Errorf("a refused install left release records %v", records)
	}

	// An object awsccmctl applied (its managed-by, no Helm annotations).
	owned := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "tiny", Namespace: otherNS, Labels: map[string]string{managedByLabel: "awsccmctl"}}}
	if _, err := cs.CoreV1().ConfigMaps(otherNS).Create(ctx, owned, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = Install(t, dir, nil, "third", otherNS, kc)
	wantRefusal(t, err, ownershipRefusalMessage,
		`label validation error: key "app.kubernetes.io/managed-by" must equal "Helm": current value is "awsccmctl"`,
		`annotation validation error: missing key "meta.helm.sh/release-name": must be set to "third"`)
	if got, err := cs.CoreV1().ConfigMaps(otherNS).Get(ctx, "tiny", metav1.GetOptions{}); err != nil || got.Labels[managedByLabel] != "awsccmctl" {
		t.Errorf("awsccmctl's ConfigMap after the refused install: %v, %v", got, err)
	}

	rel, err = Upgrade(t, dir, []byte("greeting: bye\n"), "first", ns, kc)
	if err != nil || rel.Revision != 2 || rel.Status != "deployed" {
		t.Fatalf("upgrade: %+v, %v; want revision 2 deployed", rel, err)
	}
	if cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "tiny", metav1.GetOptions{}); err != nil || cm.Data["greeting"] != "bye" {
		t.Errorf("after the upgrade: %v, %v; want greeting bye", cm, err)
	}
	_, err = Upgrade(t, dir, typoValues, "first", ns, kc)
	wantRefusal(t, err, schemaMessage)

	if _, err := Uninstall(t, "first", ns, kc); err != nil {
		t.Fatalf("uninstall: %v", err)
	}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "tiny", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Errorf("the release's ConfigMap is still there after uninstall: %v", err)
	}
	if records := releaseRecords(t, cs, ns, "first"); len(records) != 0 {
		t.Errorf("uninstall left release records %v", records)
	}
	if _, err := cs.CoreV1().ConfigMaps(otherNS).Get(ctx, "tiny", metav1.GetOptions{}); err != nil {
		t.Errorf("uninstall of another release touched awsccmctl's ConfigMap: %v", err)
	}
	_, err = Uninstall(t, "first", ns, kc)
	wantRefusal(t, err, "release: not found")
}

// wantRefusal fails the test unless err is Helm's refusal with every one
// of the messages in it.
func wantRefusal(t *testing.T, err error, messages ...string) {
	t.Helper()
	var refused *RefusedError
	if !errors.As(err, &refused) {
		t.Errorf("got %v, want Helm's refusal saying %q", err, messages)
		return
	}
	for _, m := range messages {
		if !strings.Contains(refused.Message, m) {
			t.Errorf("Helm's refusal %q does not say %q", refused.Message, m)
		}
	}
}

// releaseRecords lists the Secrets Helm keeps for release in namespace.
func releaseRecords(t *testing.T, cs kubernetes.Interface, namespace, release string) []string {
	t.Helper()
	list, err := cs.CoreV1().Secrets(namespace).List(t.Context(), metav1.ListOptions{LabelSelector: "owner=helm,name=" + release})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range list.Items {
		names = append(names, s.Name)
	}
	return names
}
