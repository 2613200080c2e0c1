package apply

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"

	"github.com/awsccmctl/awsccmctl/internal/leaderlease"
)

// LeaseRef names the leader-election Lease of a workload.
type LeaseRef struct{ Namespace, Name string }

// WaitLeader waits until Lease l is held by one of workload's Pods and was
// renewed after since: the CCM just installed leads, not another process
// holding a Lease of that name (an old CCM, one run by hand). The holder
// identity leader election writes is "<host name>_<uuid>", the host name
// being the Pod's name, or its Node's with hostNetwork.
func WaitLeader(ctx context.Context, cs kubernetes.Interface, workload *unstructured.Unstructured, l LeaseRef, since time.Time, timeout time.Duration, out io.Writer) error {
	sel, err := podSelector(workload)
	if err != nil {
		return err
	}
	return Poll(ctx, PollInterval, timeout, "Lease/"+l.Namespace+"/"+l.Name, func(ctx context.Context) (string, bool, error) {
		lease, err := leaderlease.Get(ctx, cs, l.Namespace, l.Name)
		if err != nil {
			return "", false, err
		}
		if !lease.Exists {
			return "no Lease yet: no cloud-controller-manager has become leader", false, nil
		}
		holder := lease.Holder
		if holder == "" || lease.Renewed.IsZero() {
			return "the Lease has no holder", false, nil
		}
		if lease.Renewed.Before(since) {
			return fmt.Sprintf("held by %s, last renewed %s ago", holder, time.Since(lease.Renewed).Round(time.Second)), false, nil
		}
		pods, err := cs.CoreV1().Pods(workload.GetNamespace()).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
		if err != nil {
			return "", false, err
		}
		for i := range pods.Items {
			if p := &pods.Items[i]; p.DeletionTimestamp == nil && heldBy(holder, p) {
				return "held by " + holder + " (Pod " + p.Name + ")", true, nil
			}
		}
		return fmt.Sprintf("held by %s, which is none of the %d Pods of %s: another cloud-controller-manager leads", holder, len(pods.Items), Ref(workload)), false, nil
	}, out)
}

// heldBy says whether holder, a leader-election identity, is Pod p's.
func heldBy(holder string, p *corev1.Pod) bool {
	i := strings.LastIndex(holder, "_")
	if i <= 0 {
		return false
	}
	host := holder[:i]
	names := []string{p.Name, p.Spec.Hostname}
	if p.Spec.HostNetwork {
		// The Node's host name, as the Pod sees it: kubelets register
		// Nodes under the host name, or its FQDN (EC2's private DNS name)
		// while the host name is short, or the other way round.
		if p.Spec.NodeName == "" {
			return false
		}
		if firstLabel(host) == firstLabel(p.Spec.NodeName) && (!strings.Contains(host, ".") || !strings.Contains(p.Spec.NodeName, ".")) {
			return true
		}
		names = append(names, p.Spec.NodeName)
	}
	return slices.Contains(names, host)
}

func firstLabel(s string) string {
	first, _, _ := strings.Cut(s, ".")
	return first
}

// WaitPodsReady waits until every Pod workload wants is Ready: the wait of
// a CCM run without leader election, where no Lease says it runs.
func WaitPodsReady(ctx context.Context, cs kubernetes.Interface, workload *unstructured.Unstructured, timeout time.Duration, out io.Writer) error {
	sel, err := podSelector(workload)
	if err != nil {
		return err
	}
	ns, name := workload.GetNamespace(), workload.GetName()
	return Poll(ctx, PollInterval, timeout, Ref(workload), func(ctx context.Context) (string, bool, error) {
		var want int32
		switch workload.GetKind() {
		case "DaemonSet":
			ds, err := cs.AppsV1().DaemonSets(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return "", false, err
			}
			want = ds.Status.DesiredNumberScheduled
		default:
			d, err := cs.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return "", false, err
			}
			want = 1
			if d.Spec.Replicas != nil {
				want = *d.Spec.Replicas
			}
		}
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
		if err != nil {
			return "", false, err
		}
		var ready, current int32
		for i := range pods.Items {
			p := &pods.Items[i]
			if p.DeletionTimestamp != nil {
				continue
			}
			current++
			if podReady(p) {
				ready++
			}
		}
		return fmt.Sprintf("%d of %d Pods Ready", ready, want), want > 0 && ready >= want && ready == current, nil
	}, out)
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// podSelector is the label selector of workload's Pods.
func podSelector(workload *unstructured.Unstructured) (labels.Selector, error) {
	var spec struct {
		Selector *metav1.LabelSelector `json:"selector"`
	}
	raw, _, _ := unstructured.NestedMap(workload.Object, "spec")
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &spec); err != nil {
		return nil, fmt.Errorf("%s: spec.selector: %w", Ref(workload), err)
	}
	if spec.Selector == nil {
		return nil, fmt.Errorf("%s: no spec.selector", Ref(workload))
	}
	sel, err := metav1.LabelSelectorAsSelector(spec.Selector)
	if err != nil {
		return nil, fmt.Errorf("%s: spec.selector: %w", Ref(workload), err)
	}
	if sel.Empty() {
		return nil, fmt.Errorf("%s: an empty spec.selector selects every Pod", Ref(workload))
	}
	return sel, nil
}
