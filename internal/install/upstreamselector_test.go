package install

import (
	"errors"
	"maps"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"

	"github.com/awsccmctl/awsccmctl/internal/fielderr"
)

// TestUpstreamSelector: with UpstreamSelector the DaemonSet keeps
// upstream's selector and its pods carry both that label and the app's
// name; a Deployment is unchanged (upstream makes no Deployment), and a
// podLabels entry that would break the selector is refused.
func TestUpstreamSelector(t *testing.T) {
	daemonSetOf := func(v Values) *appsv1.DaemonSet {
		t.Helper()
		for _, o := range renderCase(t, v) {
			if o.Kind == "DaemonSet" && o.Name == AppName {
				var ds appsv1.DaemonSet
				if err := yaml.UnmarshalStrict(o.YAML, &ds); err != nil {
					t.Fatal(err)
				}
				return &ds
			}
		}
		t.Fatal("no CCM DaemonSet rendered")
		return nil
	}
	ds := daemonSetOf(Values{Image: testImage, UpstreamSelector: true})
	if !maps.Equal(ds.Spec.Selector.MatchLabels, UpstreamSelectorLabels()) {
		t.Errorf("selector %v, want upstream's %v", ds.Spec.Selector.MatchLabels, UpstreamSelectorLabels())
	}
	if l := ds.Spec.Template.Labels; l["k8s-app"] != AppName || l[LabelName] != AppName {
		t.Errorf("pod labels %v: want upstream's selector label and the app's name", l)
	}
	if plain := daemonSetOf(Values{Image: testImage}); !maps.Equal(plain.Spec.Selector.MatchLabels, map[string]string{LabelName: AppName}) || plain.Spec.Template.Labels["k8s-app"] != "" {
		t.Errorf("without UpstreamSelector: selector %v, pod labels %v", plain.Spec.Selector.MatchLabels, plain.Spec.Template.Labels)
	}
	for _, o := range renderCase(t, Values{Image: testImage, UpstreamSelector: true, Workload: WorkloadDeployment}) {
		if strings.Contains(string(o.YAML), "k8s-app") {
			t.Errorf("a Deployment install with UpstreamSelector renders k8s-app in %s %s", o.Kind, o.Name)
		}
	}
	v := Values{Image: testImage, UpstreamSelector: true, PodOptions: PodOptions{PodLabels: map[string]string{"k8s-app": "other"}}}
	v.Default()
	var fe *fielderr.Error
	if err := v.Validate(); !errors.As(err, &fe) || fe.Field != "podLabels" || !strings.Contains(err.Error(), "upstream's manifests selects its pods by it") {
		t.Errorf("podLabels k8s-app over upstream's selector: %v", err)
	}
}
