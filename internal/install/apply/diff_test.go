package apply

import (
	"context"
	"strings"
	"testing"
)

// TestComparableDropsServerFields: what the apiserver and controllers write
// is not the install's and must neither show in a diff nor make an object
// "configured".
func TestComparableDropsServerFields(t *testing.T) {
	u := decode(t, `apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: ccm
  namespace: kube-system
  uid: 0b1c
  resourceVersion: "42"
  generation: 3
  creationTimestamp: "2026-01-01T00:00:00Z"
  labels: {app.kubernetes.io/managed-by: awsccmctl}
  annotations:
    deprecated.daemonset.template.generation: "3"
    deployment.kubernetes.io/revision: "2"
  managedFields: [{manager: awsccmctl, operation: Apply}]
spec: {minReadySeconds: 5}
status: {numberReady: 1}
`)[0]
	y, err := toYAML(u)
	if err != nil {
		t.Fatal(err)
	}
	for _, noise := range []string{"deprecated.daemonset.template.generation", "deployment.kubernetes.io/revision", "annotations", "managedFields", "resourceVersion", "uid", "creationTimestamp", "generation", "status", "numberReady"} {
		if strings.Contains(y, noise) {
			t.Errorf("comparable keeps %q:\n%s", noise, y)
		}
	}
	for _, kept := range []string{"app.kubernetes.io/managed-by: awsccmctl", "minReadySeconds: 5", "name: ccm"} {
		if !strings.Contains(y, kept) {
			t.Errorf("comparable lost %q:\n%s", kept, y)
		}
	}
	// The install's own annotations stay.
	u.SetAnnotations(map[string]string{"deprecated.daemonset.template.generation": "3", "awsccmctl.io/cloud-config-sha256": "ab"})
	if y, _ := toYAML(u); !strings.Contains(y, "awsccmctl.io/cloud-config-sha256: ab") || strings.Contains(y, "deprecated") {
		t.Errorf("annotations:\n%s", y)
	}
}

// TestDiffWithoutServerNoise: against the real apiserver, a changed Pod
// template bumps the generation and the DaemonSet strategy's
// deprecated.daemonset.template.generation annotation; the diff shows the
// change and neither of those.
func TestDiffWithoutServerNoise(t *testing.T) {
	c, _, run := setup(t)
	ctx := context.Background()
	objs := decode(t, manifests(run, "x"))
	if _, err := c.Apply(ctx, objs, Options{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = c.Uninstall(ctx, objs, Options{}) })
	changed := decode(t, strings.Replace(manifests(run, "x"), "aws-cloud-controller-manager:v0.0.0", "aws-cloud-controller-manager:v0.0.1", 1))
	d, err := c.Diff(ctx, changed)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(d, "+      - image: ghcr.io/awsccmctl/aws-cloud-controller-manager:v0.0.1") {
		t.Errorf("the diff lacks the new image:\n%s", d)
	}
	for _, noise := range []string{"deprecated.daemonset.template.generation", "generation:", "resourceVersion", "managedFields", "uid:", "creationTimestamp"} {
		if strings.Contains(d, noise) {
			t.Errorf("the diff shows %q:\n%s", noise, d)
		}
	}
}
