package installcmd_test

import (
	"context"
	"maps"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/awsccmctl/awsccmctl/internal/install"
	"github.com/awsccmctl/awsccmctl/internal/testbed"
)

// TestApplyAdoptsUpstreamDaemonSet: a CCM installed from upstream's
// manifests (kubectl apply; its DaemonSet selects k8s-app=<name>) is
// adopted in place. The apply keeps that selector, which the API server
// would not let it change, so the only objection left is the fields
// kubectl owns, which --force-conflicts takes over as for any adopted
// object; the DaemonSet then runs this CCM under the same uid, its pods
// labelled both ways, and uninstall hands it back rather than delete it.
func TestApplyAdoptsUpstreamDaemonSet(t *testing.T) {
	kubeconfig, ns := cluster(t)
	cs := kubernetes.NewForConfigOrDie(testbed.Get(t).Config)
	theirs := createUpstreamDaemonSet(t, cs, ns, "kubectl-client-side-apply")
	flags := []string{"--kubeconfig", kubeconfig, "--namespace", ns, "--no-detect"}

	_, stderr, err := run(t, append([]string{"install", "apply"}, flags...)...)
	if err == nil || strings.Contains(err.Error(), "immutable") || strings.Contains(err.Error(), ".spec.selector") || !strings.Contains(err.Error(), "--force-conflicts") {
		t.Fatalf("apply over upstream's DaemonSet: %v; want only the conflicts on kubectl's fields, the selector kept", err)
	}
	if !strings.Contains(stderr, "keeping that selector") {
		t.Errorf("apply did not say it keeps upstream's selector:\n%s", stderr)
	}
	if _, _, err := run(t, append([]string{"install", "apply", "--force-conflicts"}, flags...)...); err != nil {
		t.Fatalf("apply --force-conflicts: %v", err)
	}
	removeAtEnd(t, flags[:4])
	ds, err := cs.AppsV1().DaemonSets(ns).Get(context.Background(), install.AppName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ds.UID != theirs.UID || !maps.Equal(ds.Spec.Selector.MatchLabels, install.UpstreamSelectorLabels()) {
		t.Errorf("DaemonSet uid %s (was %s), selector %v: want it adopted in place with upstream's selector", ds.UID, theirs.UID, ds.Spec.Selector.MatchLabels)
	}
	pod := ds.Spec.Template.Labels
	if pod["k8s-app"] != install.AppName || pod[install.LabelName] != install.AppName {
		t.Errorf("pod labels %v: want upstream's selector label and this CCM's name", pod)
	}
	if c := ds.Spec.Template.Spec.Containers; len(c) != 1 || !strings.HasPrefix(c[0].Image, install.ImageRepository) {
		t.Errorf("%d containers, the first's image %s: want one, this CCM's", len(c), c[0].Image)
	}

	// Adopted: uninstall hands it back, with upstream's selector.
	if _, _, err := run(t, append([]string{"install", "uninstall"}, flags[:4]...)...); err != nil {
		t.Fatal(err)
	}
	back, err := cs.AppsV1().DaemonSets(ns).Get(context.Background(), install.AppName, metav1.GetOptions{})
	if err != nil || back.UID != theirs.UID {
		t.Fatalf("after uninstall: %v, %v; want upstream's DaemonSet handed back", back, err)
	}
}
