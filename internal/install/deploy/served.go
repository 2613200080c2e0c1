package deploy

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/awsccmctl/awsccmctl/internal/install"
)

// UnservedError says the cluster does not serve some kinds of the install
// (their CRDs are not installed); nothing was applied.
type UnservedError struct {
	Kinds []schema.GroupVersionKind
}

func (e *UnservedError) Error() string {
	var names []string
	monitoring := false
	for _, k := range e.Kinds {
		names = append(names, k.Kind+" ("+k.GroupVersion().String()+")")
		monitoring = monitoring || k.Group == install.MonitoringAPIGroup
	}
	msg := "the cluster does not serve " + strings.Join(names, ", ") + "; nothing was applied"
	if monitoring {
		msg += ": --monitoring renders prometheus-operator's ServiceMonitor and PrometheusRule; install prometheus-operator's CRDs first " +
			"(prometheus-operator, kube-prometheus or kube-prometheus-stack install them), or drop --monitoring"
	}
	return msg
}

// checkServed refuses objs when the cluster does not serve one of their
// kinds, before anything is written: an apply stopped halfway would leave
// the CCM installed without what was asked for.
func checkServed(c Clients, objs []*unstructured.Unstructured) error {
	kinds, err := c.Apply.Unserved(objs)
	if err != nil {
		return err
	}
	if len(kinds) > 0 {
		return &UnservedError{Kinds: kinds}
	}
	return nil
}
