package migrate

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// kopsLabelled relabels a mirror Pod as kops' nodeup writes it:
// k8s-app=<component> instead of kubeadm's component=<component>.
func kopsLabelled(p *corev1.Pod) *corev1.Pod {
	p.Labels = map[string]string{"k8s-app": p.Spec.Containers[0].Name}
	return p
}

func apiserverPod(node string) *corev1.Pod {
	return mirrorPod("kube-apiserver", node, "registry.k8s.io/kube-apiserver:v1.26.13", []string{"--cloud-provider=aws"})
}

// TestDistributionFromEveryControlPlanePod: the distribution is decided
// from every control-plane Pod and kubeadm-config together; a mixed
// layout is refused with the Pods of each kind named, never switched to
// kops by one kops-labelled Pod.
func TestDistributionFromEveryControlPlanePod(t *testing.T) {
	kopsCP := func(n string) []runtime.Object {
		return []runtime.Object{kopsLabelled(kcmPod(n, inTree...)), kopsLabelled(apiserverPod(n)), node(n, true)}
	}
	kubeadmCP := func(n string) []runtime.Object {
		return []runtime.Object{kcmPod(n, inTree...), apiserverPod(n), node(n, true)}
	}
	join := func(sets ...[]runtime.Object) []runtime.Object {
		var out []runtime.Object
		for _, s := range sets {
			out = append(out, s...)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		objs []runtime.Object
		want Distribution
		// refusal: the parts the refusal must name.
		refusal []string
	}{
		{"kubeadm", join(kubeadmCP("cp-1"), kubeadmCP("cp-2"), []runtime.Object{kubeadmConfig()}), DistributionKubeadm, nil},
		{"kops", join(kopsCP("cp-1"), kopsCP("cp-2"), kopsCP("cp-3")), DistributionKops, nil},
		{"one kops-labelled kube-controller-manager in a kubeadm cluster",
			join(kubeadmCP("cp-1"), kubeadmCP("cp-2"), []runtime.Object{kopsLabelled(kcmPod("cp-3", inTree...)), apiserverPod("cp-3"), node("cp-3", true), kubeadmConfig()}), "",
			[]string{"mixes kops and kubeadm static Pods", "kops-labelled (k8s-app=<component>): kube-controller-manager-cp-3 on cp-3",
				"kubeadm-labelled (component=<component>): kube-controller-manager-cp-1 on cp-1, kube-controller-manager-cp-2 on cp-2, kube-apiserver-cp-1 on cp-1, kube-apiserver-cp-2 on cp-2, kube-apiserver-cp-3 on cp-3",
				"kube-system/kubeadm-config exists", "nodeup", "make the control plane one kind"}},
		{"kops control plane with one kubeadm node, no kubeadm-config",
			join(kopsCP("cp-1"), kubeadmCP("cp-2")), "",
			[]string{"mixes kops and kubeadm static Pods", "kube-controller-manager-cp-1 on cp-1", "kube-controller-manager-cp-2 on cp-2", "kube-system/kubeadm-config does not exist"}},
		{"every Pod kops-labelled but kubeadm-config exists",
			join(kopsCP("cp-1"), []runtime.Object{kubeadmConfig()}), "",
			[]string{"every control-plane static Pod carries kops' labels", "kube-controller-manager-cp-1 on cp-1", "kubeadm-config exists, which only kubeadm writes", "delete the stray kube-system/kubeadm-config"}},
		{"neither", kubeadmCP("cp-1"), "", []string{"neither kubeadm's", "manual sequence"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := discover(t, "v1.26.13", tc.objs...)
			p, err := BuildPlan(c, PlanOptions{Preflight: passingPreflight})
			if tc.refusal == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if p.Spec.Cluster.Distribution != tc.want {
					t.Errorf("distribution %s, want %s", p.Spec.Cluster.Distribution, tc.want)
				}
				if (p.Spec.Kops != nil) != (tc.want == DistributionKops) {
					t.Errorf("spec.kops %+v on a %s plan", p.Spec.Kops, tc.want)
				}
				return
			}
			var refused *RefusedError
			if !errors.As(err, &refused) {
				t.Fatalf("got plan %v, error %v; want a refusal", p != nil, err)
			}
			if len(refused.Refusals) != 1 {
				t.Errorf("%d refusals, want the layout's alone:\n%v", len(refused.Refusals), err)
			}
			for _, w := range tc.refusal {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("refusal lacks %q:\n%v", w, err)
				}
			}
		})
	}
}
