package deploy

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/awsccmctl/awsccmctl/internal/install/apply"
)

// Helm stamps every object of a release with these annotations (and the
// managed-by label "Helm") and refuses to install over an object without
// them; helm upgrade reapplies its own manifest over whatever else changed.
const (
	helmReleaseNameAnnotation      = "meta.helm.sh/release-name"
	helmReleaseNamespaceAnnotation = "meta.helm.sh/release-namespace"
	helmManagedBy                  = "Helm"
)

// helmRelease returns the Helm release (name and namespace) that owns the
// CCM's workload in the cluster, if any. Helm owns a release's objects
// together, and every release of the chart holds the workload, so reading
// it (in either kind: the release may run the other one) tells without a
// read per object. owned without a name: the workload carries Helm's
// managed-by label but no release (rendered with helm template by a GitOps
// tool).
func helmRelease(ctx context.Context, c Clients, objs []*unstructured.Unstructured) (name, namespace string, owned *unstructured.Unstructured, err error) {
	w := workload(objs)
	for _, u := range []*unstructured.Unstructured{w, otherWorkload(w)} {
		live, err := c.Apply.Live(ctx, u)
		if err != nil {
			return "", "", nil, err
		}
		if live == nil {
			continue
		}
		if rel := live.GetAnnotations()[helmReleaseNameAnnotation]; rel != "" {
			return rel, live.GetAnnotations()[helmReleaseNamespaceAnnotation], u, nil
		}
		// helm template (Argo CD, kustomize's helmCharts) sets no
		// annotation, but the chart still renders this label.
		if live.GetLabels()[apply.ManagedByLabel] == helmManagedBy {
			return "", "", u, nil
		}
	}
	return "", "", nil, nil
}

// refuseHelmRelease is a *MismatchError when a Helm release owns the CCM's
// objects: install apply would take them over field by field and the next
// helm upgrade would take them back, and uninstall would delete what the
// release still lists. verb says what was asked.
func refuseHelmRelease(ctx context.Context, c Clients, objs []*unstructured.Unstructured, verb string) error {
	rel, ns, owned, err := helmRelease(ctx, c, objs)
	if err != nil || owned == nil {
		return err
	}
	if rel == "" {
		return &MismatchError{fmt.Errorf("the CCM's objects were rendered from the Helm chart (%s carries %s=%s), by Helm or a GitOps tool (Argo CD, Flux, kustomize helmCharts); install %s would fight that tool over them: change them where they are rendered from; nothing was changed",
			apply.Ref(owned), apply.ManagedByLabel, helmManagedBy, verb)}
	}
	way := fmt.Sprintf("change it with helm upgrade %s --namespace %s (awsccmctl install manifests --format helm-values prints the values for these flags), or remove it with helm uninstall %s --namespace %s before installing with awsccmctl", rel, ns, rel, ns)
	if verb == "uninstall" {
		way = fmt.Sprintf("remove it with helm uninstall %s --namespace %s", rel, ns)
	}
	return &MismatchError{fmt.Errorf("the CCM is installed by Helm release %s in namespace %s (%s carries %s=%s); install %s would fight Helm over its objects: %s; nothing was changed",
		rel, ns, apply.Ref(owned), helmReleaseNameAnnotation, rel, verb, way)}
}
