package deploy

import (
	"context"
	"fmt"
	"io"
	"maps"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/awsccmctl/awsccmctl/internal/install"
)

// KeepUpstreamSelector sets v.UpstreamSelector when the CCM's live
// DaemonSet selects its pods as upstream's manifests and chart do
// (install.UpstreamSelectorLabels): the API server refuses an apply that
// changes a DaemonSet's selector, so the install keeps that one and adopts
// the DaemonSet in place. One GET; a DaemonSet that does not exist, or
// selects otherwise, leaves v as it is.
func KeepUpstreamSelector(ctx context.Context, kube kubernetes.Interface, v *install.Values, log io.Writer) error {
	if v.Workload != install.WorkloadDaemonSet {
		return nil
	}
	ds, err := kube.AppsV1().DaemonSets(v.Namespace).Get(ctx, install.AppName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("read DaemonSet %s/%s: %w", v.Namespace, install.AppName, err)
	}
	if ds.Spec.Selector == nil || len(ds.Spec.Selector.MatchExpressions) > 0 ||
		!maps.Equal(ds.Spec.Selector.MatchLabels, install.UpstreamSelectorLabels()) {
		return nil
	}
	v.UpstreamSelector = true
	fmt.Fprintf(log, "DaemonSet %s/%s selects k8s-app=%s, as upstream's manifests make it: keeping that selector (a DaemonSet's selector cannot change) and giving the pods its label\n",
		v.Namespace, install.AppName, install.AppName)
	return nil
}
