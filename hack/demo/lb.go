package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/awsccmctl/awsccmctl/internal/awsapi"
	"github.com/awsccmctl/awsccmctl/internal/childproc"
	"github.com/awsccmctl/awsccmctl/internal/clustertag"
	"github.com/awsccmctl/awsccmctl/internal/lbconfig"
	"github.com/awsccmctl/awsccmctl/internal/lbnames"
)

const lbNamespace = "default"

// lbCase is one Service of type LoadBalancer the demo creates, and what it
// saw: the status hostname, how long it took, and the AWS calls each step
// cost.
type lbCase struct {
	svc     *corev1.Service
	kind    string // Classic or NLB
	host    string
	ready   time.Duration // create to status hostname
	gone    time.Duration // delete to the Service being gone
	create  map[string]int
	destroy map[string]int
}

// lbServices are the demo's Services: a Classic ELB limited to a source
// range, and a two-port NLB with cross-zone load balancing.
func lbServices() []*lbCase {
	port := func(name string, p, target int32) corev1.ServicePort {
		return corev1.ServicePort{Name: name, Port: p, TargetPort: intstr.FromInt32(target), Protocol: corev1.ProtocolTCP}
	}
	svc := func(name string, ann map[string]string, ranges []string, ports ...corev1.ServicePort) *corev1.Service {
		return &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: lbNamespace, Annotations: ann},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Selector: map[string]string{"app": name},
				Ports: ports, LoadBalancerSourceRanges: ranges},
		}
	}
	return []*lbCase{
		{kind: "Classic", svc: svc("web", map[string]string{
			lbconfig.KeyAdditionalResourceTags: "team=web,env=demo",
			lbconfig.KeyConnectionIdleTimeout:  "120",
		}, []string{"203.0.113.0/24"}, port("http", 80, 8080))},
		{kind: "NLB", svc: svc("api", map[string]string{
			lbnames.TypeAnnotation:             lbnames.TypeNLB,
			lbconfig.KeyCrossZoneLoadBalancing: "true",
			lbconfig.KeyAdditionalResourceTags: "team=api,env=demo",
		}, nil, port("http", 80, 8080), port("https", 443, 8443))},
	}
}

// loadBalancers creates the demo's Services one after the other, shows what
// the CCM built for them in AWS (read through the SDK, as the CCM reads it)
// and what it cost, deletes them and shows that nothing is left.
func (d *demo) loadBalancers(ctx context.Context, w io.Writer) error {
	aws, err := d.awsClients(ctx)
	if err != nil {
		return fmt.Errorf("AWS SDK clients for the emulator: %w", err)
	}
	nodeSG := d.nodeGroupID()
	nodeRulesBefore, err := ingressOf(ctx, aws, nodeSG)
	if err != nil {
		return err
	}
	cases := lbServices()
	for _, c := range cases {
		step("creating Service %s/%s (%s, ports %s)", lbNamespace, c.svc.Name, c.kind, portList(c.svc))
		before, err := lbCallCounts(d.emu.LogPath)
		if err != nil {
			return err
		}
		start := time.Now()
		created, err := d.kube.CoreV1().Services(lbNamespace).Create(ctx, c.svc, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("create Service %s: %w", c.svc.Name, err)
		}
		if c.svc, err = d.waitHostname(ctx, created.Name); err != nil {
			return err
		}
		c.ready = time.Since(start)
		c.host = c.svc.Status.LoadBalancer.Ingress[0].Hostname
		if c.create, err = d.settleCalls(ctx, before); err != nil {
			return err
		}
	}

	bold := boldFor(w)
	fmt.Fprintln(w, bold(fmt.Sprintf("Load balancers (Services in namespace %s, created one after the other):", lbNamespace)))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  SERVICE\tTYPE\tPORTS\tHOSTNAME\tREADY IN")
	for _, c := range cases {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", c.svc.Name, c.kind, portList(c.svc), c.host, c.ready.Round(100*time.Millisecond))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, bold("What AWS holds for them (read with the AWS SDK at the emulator, as the CCM reads it):"))
	for _, c := range cases {
		var err error
		if c.kind == "NLB" {
			err = d.showNLB(ctx, w, aws, c)
		} else {
			err = d.showClassic(ctx, w, aws, c)
		}
		if err != nil {
			return fmt.Errorf("Service %s: %w", c.svc.Name, err) //nolint:staticcheck // ST1005: the Kubernetes kind, spelt as kubectl does
		}
	}
	nodeRules, err := ingressOf(ctx, aws, nodeSG)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  node group %s: %d inbound rules (%d before the load balancers)\n", nodeSG, len(nodeRules), len(nodeRulesBefore))
	for _, r := range nodeRules {
		if !slices.Contains(nodeRulesBefore, r) {
			fmt.Fprintf(w, "    + %s\n", r)
		}
	}
	if err := d.showWarnings(ctx, w, cases); err != nil {
		return err
	}

	for _, c := range cases {
		step("deleting Service %s/%s", lbNamespace, c.svc.Name)
		before, err := lbCallCounts(d.emu.LogPath)
		if err != nil {
			return err
		}
		start := time.Now()
		if err := d.kube.CoreV1().Services(lbNamespace).Delete(ctx, c.svc.Name, metav1.DeleteOptions{}); err != nil {
			return fmt.Errorf("delete Service %s: %w", c.svc.Name, err)
		}
		if err := d.waitGone(ctx, c.svc.Name); err != nil {
			return err
		}
		c.gone = time.Since(start)
		if c.destroy, err = d.settleCalls(ctx, before); err != nil {
			return err
		}
	}

	fmt.Fprintln(w, bold("AWS calls the load balancers cost (emulator log; EC2 DescribeInstances, shared with the node controllers, left out):"))
	for _, c := range cases {
		showCalls(w, c.svc.Name+" ("+c.kind+") create", c.create)
		showCalls(w, c.svc.Name+" ("+c.kind+") delete", c.destroy)
	}

	fmt.Fprintln(w, bold("After deleting both Services:"))
	for _, c := range cases {
		fmt.Fprintf(w, "  %s gone %s after the delete (the CCM released the cleanup finalizer)\n", c.svc.Name, c.gone.Round(100*time.Millisecond))
	}
	left, err := leftovers(ctx, aws)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  AWS holds %s\n", left.String())
	after, err := ingressOf(ctx, aws, nodeSG)
	if err != nil {
		return err
	}
	sameRules := slices.Equal(after, nodeRulesBefore)
	if sameRules {
		fmt.Fprintf(w, "  node group %s: back to its %d inbound rules\n", nodeSG, len(after))
	}
	switch {
	case !left.empty():
		return fmt.Errorf("the load balancers' Services are gone but AWS still holds %s", left.String())
	case !sameRules:
		return fmt.Errorf("node group %s kept load-balancer rules after the Services were deleted: before %q, after %q", nodeSG, nodeRulesBefore, after)
	}
	return nil
}

// awsClients builds the SDK clients the way the CCM's are built: the CCM's
// AWS_* settings (emulator endpoint, static credentials, no shared files)
// replace the demo's own in its environment, and awsapi.NewClients reads
// them. Children started later get their environment explicitly.
func (d *demo) awsClients(ctx context.Context) (*awsapi.Clients, error) {
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "AWS_") {
			if err := os.Unsetenv(k); err != nil {
				return nil, err
			}
		}
	}
	for _, kv := range d.awsEnv {
		if k, v, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "AWS_") {
			if err := os.Setenv(k, v); err != nil {
				return nil, err
			}
		}
	}
	return awsapi.NewClients(ctx, awsapi.Options{Region: d.fixture.Region, HTTPTimeout: 5 * time.Second})
}

// nodeGroupID is the nodes' security group: the fixture's group tagged for
// the cluster.
func (d *demo) nodeGroupID() string {
	for _, sg := range d.fixture.SecurityGroups {
		if _, ok := sg.Tags[clustertag.Key(clusterID)]; ok {
			return sg.ID
		}
	}
	return ""
}

// waitHostname waits until the Service's status carries a hostname.
func (d *demo) waitHostname(ctx context.Context, name string) (*corev1.Service, error) {
	var svc *corev1.Service
	err := d.poll(ctx, "a load balancer hostname in the status of Service "+name, name, func() (bool, error) {
		s, err := d.kube.CoreV1().Services(lbNamespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		svc = s
		ing := s.Status.LoadBalancer.Ingress
		return len(ing) > 0 && ing[0].Hostname != "", nil
	})
	return svc, err
}

// waitGone waits until the Service is gone, i.e. the service controller
// removed its cleanup finalizer after the CCM deleted everything.
func (d *demo) waitGone(ctx context.Context, name string) error {
	return d.poll(ctx, "Service "+name+" to be gone (the cleanup finalizer removed)", name, func() (bool, error) {
		_, err := d.kube.CoreV1().Services(lbNamespace).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}

// poll runs done every 200ms until it is true, for at most the demo
// timeout; a failure names what was awaited, the Service's events and the
// tail of the CCM log.
func (d *demo) poll(ctx context.Context, what, svcName string, done func() (bool, error)) error {
	deadline := time.Now().Add(d.opts.timeout)
	for {
		ok, err := done()
		if ok {
			return nil
		}
		if err != nil && ctx.Err() == nil {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		if d.ccm.Exited() {
			return d.ccm.ExitError(3000)
		}
		if time.Now().After(deadline) {
			var evs []string
			if list, err := serviceEvents(ctx, d, svcName); err == nil {
				for _, e := range list {
					evs = append(evs, fmt.Sprintf("  %s %s: %s", e.Type, e.Reason, e.Message))
				}
			}
			return fmt.Errorf("no %s within %s\nevents of the Service:\n%s\n--- tail of %s ---\n%s",
				what, d.opts.timeout, dash(strings.Join(evs, "\n")), d.ccm.LogPath, childproc.LogTail(d.ccm.LogPath, 3000))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func serviceEvents(ctx context.Context, d *demo, name string) ([]corev1.Event, error) {
	list, err := d.kube.CoreV1().Events(lbNamespace).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.kind=Service,involvedObject.name=" + name})
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}

// showWarnings prints the Warning events recorded on the Services.
func (d *demo) showWarnings(ctx context.Context, w io.Writer, cases []*lbCase) error {
	var lines []string
	for _, c := range cases {
		evs, err := serviceEvents(ctx, d, c.svc.Name)
		if err != nil {
			return err
		}
		for _, e := range evs {
			if e.Type == corev1.EventTypeWarning {
				lines = append(lines, fmt.Sprintf("%s: %s (x%d): %s", c.svc.Name, e.Reason, max(e.Count, 1), e.Message))
			}
		}
	}
	if len(lines) == 0 {
		fmt.Fprintln(w, "  Warning events on the Services: none")
		return nil
	}
	fmt.Fprintln(w, "  Warning events on the Services:")
	for _, l := range lines {
		wrap(w, "    ", l)
	}
	return nil
}
