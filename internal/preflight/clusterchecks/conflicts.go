package clusterchecks

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/awsccmctl/awsccmctl/internal/install"
	"github.com/awsccmctl/awsccmctl/internal/leaderlease"
	"github.com/awsccmctl/awsccmctl/internal/leadermigration"
	"github.com/awsccmctl/awsccmctl/internal/preflight"
)

const (
	// ccmLease is the leader-election Lease of a cloud-controller-manager
	// (--leader-elect-resource-name's default, what install renders).
	ccmLease = install.LeaseName
	// migrationLease is the default leaderName of Leader Migration
	// (k8s.io/controller-manager's DefaultLeaderMigrationConfiguration).
	migrationLease = leadermigration.LeaseName
	// ccmImage is in the image name of every cloud-controller-manager;
	// awsCCMImage in the AWS one's (registry.k8s.io/provider-aws/...).
	ccmImage    = "cloud-controller-manager"
	awsCCMImage = "provider-aws/cloud-controller-manager"
)

// leaseState is what a Lease says about its holder.
type leaseState struct {
	found    bool
	holder   string
	age      time.Duration // since the last renewal
	duration time.Duration
}

// held reports whether the holder still holds the Lease.
func (s leaseState) held() bool { return s.found && s.holder != "" && s.age < s.duration }

func (s leaseState) String() string {
	holder := s.holder
	if holder == "" {
		holder = "nobody"
	}
	return fmt.Sprintf("holder %s, renewed %s ago, leaseDurationSeconds %d", holder, duration.HumanDuration(s.age), int(s.duration/time.Second))
}

// lease reads the named Lease in kube-system from the snapshot.
func (r *runner) lease(ctx context.Context, name string) (leaseState, error) {
	leases, err := r.snap.Leases(ctx)
	if err != nil {
		return leaseState{}, err
	}
	for i := range leases {
		if leases[i].Name == name {
			return stateOf(&leases[i], r.in.Now()), nil
		}
	}
	return leaseState{}, nil
}

// stateOf reads Lease l (leaderlease.Of) at now: a Lease without a renewal
// time counts from its acquisition, then from its creation.
func stateOf(l *coordinationv1.Lease, now time.Time) leaseState {
	r := leaderlease.Of(l)
	renewed := r.Created
	switch {
	case !r.Renewed.IsZero():
		renewed = r.Renewed
	case !r.Acquired.IsZero():
		renewed = r.Acquired
	}
	return leaseState{found: true, holder: r.Holder, duration: r.DurationOrDefault(), age: max(now.Sub(renewed), 0)}
}

func (r *runner) ccmLease(ctx context.Context) preflight.Result {
	s, err := r.lease(ctx, ccmLease)
	if err != nil {
		return preflight.Fail(readFix(err), "%v", err)
	}
	name := kubeSystem + "/" + ccmLease
	find := "find it with `kubectl get pods -A -o wide | grep cloud-controller-manager` (conflicts-other-ccm-pods lists it) and remove it, or run `awsccmctl preflight --mode=post-install` if it is the AWS CCM you installed"
	switch r.in.Mode {
	case preflight.ModePostInstall:
		switch {
		case s.held():
			return preflight.Pass("Lease %s is held: %s", name, s)
		case s.found:
			return preflight.Fail("check the cloud-controller-manager Pods and their log: the leader stopped renewing",
				"no cloud-controller-manager holds Lease %s any more (%s)", name, s)
		}
		return preflight.Fail("install the CCM with `awsccmctl install`, or check that it runs with --leader-elect=true and may update Leases in kube-system",
			"no Lease %s: no cloud-controller-manager runs with leader election", name)
	case preflight.ModePreMigrate:
		if s.held() {
			return preflight.Fail(find, "a cloud-controller-manager already runs before the migration: Lease %s is held (%s)", name, s)
		}
	default:
		if s.held() {
			return preflight.Fail(find, "a cloud-controller-manager already runs and would fight the one install adds: Lease %s is held (%s)", name, s)
		}
	}
	if s.found {
		return preflight.Pass("Lease %s exists but has expired (%s): no cloud-controller-manager runs now", name, s)
	}
	return preflight.Pass("no Lease %s: no cloud-controller-manager runs", name)
}

func (r *runner) migrationLease(ctx context.Context) preflight.Result {
	s, err := r.lease(ctx, migrationLease)
	if err != nil {
		return preflight.Fail(readFix(err), "%v", err)
	}
	name := kubeSystem + "/" + migrationLease
	switch {
	case !s.found:
		return preflight.Pass("no leader-migration Lease %s", name)
	case s.age > 2*s.duration:
		return preflight.Fail(fmt.Sprintf("when no kube-controller-manager or cloud-controller-manager runs with --enable-leader-migration any more, delete it: `kubectl -n %s delete lease %s`", kubeSystem, migrationLease),
			"leader-migration Lease %s is stale (%s): a migration was left unfinished, and a controller manager started with leader migration would wait on it", name, s)
	}
	return preflight.Pass("leader migration in progress: Lease %s is live (%s)", name, s)
}

func (r *runner) otherCCMPods(ctx context.Context) preflight.Result {
	pods, err := r.snap.Pods(ctx)
	if err != nil {
		return preflight.Fail(readFix(err), "%v", err)
	}
	var aws, others []string
	for i := range pods {
		p := &pods[i]
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		img := ccmImageOf(p)
		switch {
		case img == "":
		case strings.Contains(img, awsCCMImage):
			aws = append(aws, fmt.Sprintf("%s/%s (%s)", p.Namespace, p.Name, img))
		default:
			others = append(others, fmt.Sprintf("%s/%s (%s)", p.Namespace, p.Name, img))
		}
	}
	sort.Strings(aws)
	sort.Strings(others)
	const fix = "remove the other cloud-controller-manager (its Deployment, DaemonSet or static Pod manifest) before installing; two CCMs fight over Nodes, routes and load balancers"
	if r.in.Mode == preflight.ModePostInstall {
		if len(others) > 0 {
			return preflight.Fail(fix, "a cloud-controller-manager that is not AWS's runs next to it: %s", listNames(others))
		}
		if len(aws) == 0 {
			return preflight.Pass("no other cloud-controller-manager Pod (none with an AWS CCM image either; conflicts-ccm-lease shows whether it runs)")
		}
		return preflight.Pass("only AWS cloud-controller-manager Pods: %s", listNames(aws))
	}
	all := slices.Concat(aws, others)
	if len(all) == 0 {
		return preflight.Pass("no Pod runs a cloud-controller-manager image")
	}
	return preflight.Fail(fix+"; if it is the AWS CCM you installed, run `awsccmctl preflight --mode=post-install` instead",
		"a cloud-controller-manager image already runs in %s: %s", plural(len(all), "Pod"), listNames(all))
}

// ccmImageOf returns the first image of p's containers that is a
// cloud-controller-manager, "" if none.
func ccmImageOf(p *corev1.Pod) string {
	for _, c := range p.Spec.Containers {
		if strings.Contains(c.Image, ccmImage) {
			return c.Image
		}
	}
	return ""
}
