package migrate

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"

	"github.com/awsccmctl/awsccmctl/internal/install"
	"github.com/awsccmctl/awsccmctl/internal/leaderlease"
	"github.com/awsccmctl/awsccmctl/internal/leadermigration"
	"github.com/awsccmctl/awsccmctl/internal/nodefiles"
)

// lease is a Lease's holder as the gates need it.
type lease struct {
	Exists   bool
	Holder   string
	Acquired time.Time
	Renewed  time.Time
	Duration time.Duration
}

// fresh reports whether the holder renewed within its lease duration.
func (l lease) fresh(now time.Time) bool {
	d := l.Duration
	if d <= 0 {
		d = DefaultLeaseDuration
	}
	return l.Exists && l.Holder != "" && now.Sub(l.Renewed) <= d
}

func readLease(ctx context.Context, client kubernetes.Interface, name string) (lease, error) {
	r, err := leaderlease.Get(ctx, client, leadermigration.LeaseNamespace, name)
	return leaseFrom(r), err
}

func leaseOf(l *coordinationv1.Lease) lease { return leaseFrom(leaderlease.Of(l)) }

func leaseFrom(r leaderlease.Record) lease {
	return lease{Exists: r.Exists, Holder: r.Holder, Acquired: r.Acquired, Renewed: r.Renewed, Duration: r.Duration}
}

// leases are the three Leases of the hand-over.
type leases struct {
	KCM, CCM, Migration lease
}

// migrationHolder says which manager holds the migration lease: both
// managers' identities look alike (<hostname>_<uuid>), so the migration
// lease's holder is compared with the holders of their main leases.
func (l leases) migrationHolder() string {
	switch {
	case !l.Migration.Exists || l.Migration.Holder == "":
		return "nobody"
	case l.Migration.Holder == l.KCM.Holder:
		return leadermigration.ComponentKCM
	case l.Migration.Holder == l.CCM.Holder:
		return leadermigration.ComponentCCM
	}
	return "an unknown identity " + l.Migration.Holder
}

func (l leases) String() string {
	return fmt.Sprintf("leases: %s=%q, %s=%q, %s=%q (held by %s)",
		leadermigration.KCMLeaseName, l.KCM.Holder, install.LeaseName, l.CCM.Holder,
		leadermigration.LeaseName, l.Migration.Holder, l.migrationHolder())
}

func readLeases(ctx context.Context, client kubernetes.Interface) (leases, error) {
	var out leases
	var err error
	if out.KCM, err = readLease(ctx, client, leadermigration.KCMLeaseName); err != nil {
		return out, err
	}
	if out.CCM, err = readLease(ctx, client, install.LeaseName); err != nil {
		return out, err
	}
	out.Migration, err = readLease(ctx, client, leadermigration.LeaseName)
	return out, err
}

// staticPodFlags are one control-plane component's flags on one node, as
// its mirror Pod shows them.
type staticPodFlags struct {
	Node  string
	Pod   string
	Image string
	Flags nodefiles.Flags
	// Kops: the Pod carries kops' k8s-app label (kubeadm's is component).
	Kops bool
}

// mirrorPodFlags returns the flags of component's mirror Pods in
// kube-system, one per node (kubeadm labels them component=<name>, kops
// k8s-app=<name>), read with the node-file parser preflight uses.
func mirrorPodFlags(ctx context.Context, client kubernetes.Interface, component string) ([]staticPodFlags, error) {
	var out []staticPodFlags
	seen := map[string]bool{}
	for _, key := range []string{"component", "k8s-app"} {
		pods, err := client.CoreV1().Pods(metav1.NamespaceSystem).List(ctx, metav1.ListOptions{
			LabelSelector: labels.SelectorFromSet(labels.Set{key: component}).String(),
		})
		if err != nil {
			return nil, fmt.Errorf("list %s mirror Pods: %w", component, err)
		}
		for i := range pods.Items {
			p := &pods.Items[i]
			if _, mirror := p.Annotations[corev1.MirrorPodAnnotationKey]; !mirror || seen[p.Name] {
				continue
			}
			seen[p.Name] = true
			sp := nodefiles.FromPod(p)
			if sp == nil || sp.Component != component {
				continue
			}
			out = append(out, staticPodFlags{Node: p.Spec.NodeName, Pod: p.Name, Image: sp.Image, Flags: sp.Flags, Kops: key == "k8s-app"})
		}
	}
	slices.SortFunc(out, func(a, b staticPodFlags) int { return strings.Compare(a.Node, b.Node) })
	return out, nil
}

// ccmHealthz reads /healthz?verbose of every running CCM Pod through the
// apiserver's pods proxy (so it works from wherever apply runs) and returns
// the union of their checks: only the leader runs controllers, and "the CCM
// runs X" holds when any of them does.
func ccmHealthz(ctx context.Context, client kubernetes.Interface, namespace string) (pods string, checks []string, err error) {
	list, err := client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{
		LabelSelector: labels.SelectorFromSet(labels.Set{install.LabelName: install.AppName}).String(),
	})
	if err != nil {
		return "", nil, fmt.Errorf("list CCM Pods: %w", err)
	}
	var names []string
	seen := map[string]bool{}
	var errs []string
	for _, p := range list.Items {
		if p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil {
			continue
		}
		body, err := client.CoreV1().Pods(namespace).ProxyGet("https", p.Name, fmt.Sprint(install.SecurePort), "/healthz", map[string]string{"verbose": "true"}).DoRaw(ctx)
		if err != nil {
			errs = append(errs, fmt.Sprintf("GET /healthz?verbose of Pod %s/%s through the apiserver: %v", namespace, p.Name, err))
			continue
		}
		names = append(names, p.Name)
		for _, c := range leadermigration.HealthzChecks(string(body)) {
			if !seen[c] {
				seen[c] = true
				checks = append(checks, c)
			}
		}
	}
	if len(names) == 0 {
		if len(errs) > 0 {
			return "", nil, fmt.Errorf("%s", strings.Join(errs, "; "))
		}
		return "", nil, fmt.Errorf("no running CCM Pod in %s", namespace)
	}
	return strings.Join(names, ","), checks, nil
}

// canAccessLease asks the apiserver whether user (with groups) may verb the
// migration lease.
func canAccessLease(ctx context.Context, client kubernetes.Interface, user string, groups []string, verb string) (bool, string, error) {
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: user, Groups: groups,
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: leadermigration.LeaseNamespace, Verb: verb, Group: "coordination.k8s.io",
			Resource: "leases", Name: leadermigration.LeaseName,
		},
	}}
	res, err := client.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
	if err != nil {
		return false, "", fmt.Errorf("SubjectAccessReview for %s: %w", user, err)
	}
	return res.Status.Allowed, res.Status.Reason, nil
}
