package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	cloudproviderapi "k8s.io/cloud-provider/api"

	"github.com/awsccmctl/awsccmctl/internal/childproc"
	"github.com/awsccmctl/awsccmctl/pkg/awscloud"
	"github.com/awsccmctl/awsccmctl/pkg/providerid"
	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// kubeletPort is where the demo's kubelets listen, as real ones do.
const kubeletPort = 10250

// kubeletHandler answers as n's kubelet would: /configz with the
// KubeletConfiguration it runs with (providerID only with --provider-id).
func kubeletHandler(n plannedNode) http.Handler {
	body, _ := json.Marshal(map[string]any{"kubeletconfig": map[string]any{
		"kind": "KubeletConfiguration", "apiVersion": "kubelet.config.k8s.io/v1beta1", "providerID": n.providerID,
	}})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/configz" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	})
}

const (
	shutdownTaint      = "node.cloudprovider.kubernetes.io/shutdown"
	unresolvableNodeID = "worker-1.corp.example.com"
)

// plannedNode is one Node the demo registers as a kubelet would.
type plannedNode struct {
	name       string
	how        string // how the kubelet named it
	providerID string // --provider-id, empty unless given
	notReady   bool
	inst       *awsemu.Instance // nil: matches no instance
}

// plan covers every way a Node meets the CCM.
type plan struct {
	resolvable   []plannedNode // must end up initialized
	stopped      plannedNode   // must get the shutdown taint
	terminated   plannedNode   // must be deleted
	unresolvable plannedNode   // must get a Warning event
}

func (p plan) all() []plannedNode {
	return append(append([]plannedNode{}, p.resolvable...), p.stopped, p.terminated, p.unresolvable)
}

// makePlan names the fixture's running instances by private DNS name, by
// instance ID and with --provider-id in turn, and adds the stopped and the
// terminated instance's nodes (NotReady) and a node with a custom hostname.
func makePlan(f *awsemu.Fixture) (plan, error) {
	var p plan
	var stopped, terminated *awsemu.Instance
	for i := range f.Instances {
		in := &f.Instances[i]
		switch in.State {
		case "running":
			n := plannedNode{inst: in}
			switch len(p.resolvable) % 3 {
			case 0:
				n.name, n.how = in.PrivateDNSName, "private DNS name"
			case 1:
				n.name, n.how = in.ID, "instance ID"
			default:
				n.name, n.how = tagOr(in, "Name", "custom-"+in.ID), "--provider-id"
				n.providerID = providerid.Format(in.AvailabilityZone, in.ID)
			}
			p.resolvable = append(p.resolvable, n)
		case "stopped":
			if stopped == nil {
				stopped = in
			}
		case "terminated":
			if terminated == nil {
				terminated = in
			}
		}
	}
	if len(p.resolvable) == 0 || stopped == nil || terminated == nil {
		return p, errors.New("the fixture needs running, stopped and terminated instances")
	}
	p.stopped = plannedNode{name: stopped.PrivateDNSName, how: "private DNS name", notReady: true, inst: stopped}
	p.terminated = plannedNode{name: terminated.ID, how: "instance ID", notReady: true, inst: terminated}
	p.unresolvable = plannedNode{name: unresolvableNodeID, how: "custom hostname"}
	return p, nil
}

func tagOr(in *awsemu.Instance, key, def string) string {
	if v := in.Tags[key]; v != "" {
		return strings.ToLower(v)
	}
	return def
}

// registerNode creates a Node the way a kubelet with
// --cloud-provider=external does: the uninitialized taint, spec.providerID
// only with --provider-id, then the Ready condition through the status
// subresource.
func registerNode(ctx context.Context, kube kubernetes.Interface, n plannedNode) error {
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: n.name, Labels: map[string]string{corev1.LabelHostname: n.name}},
		Spec: corev1.NodeSpec{
			ProviderID: n.providerID,
			Taints:     []corev1.Taint{{Key: cloudproviderapi.TaintExternalCloudProvider, Value: "true", Effect: corev1.TaintEffectNoSchedule}},
		},
	}
	if _, err := kube.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create node %s: %w", n.name, err)
	}
	ready := corev1.ConditionTrue
	reason := "KubeletReady"
	if n.notReady {
		ready, reason = corev1.ConditionFalse, "KubeletNotReady"
	}
	now := metav1.Now()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		latest, err := kube.CoreV1().Nodes().Get(ctx, n.name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		latest.Status.DaemonEndpoints.KubeletEndpoint.Port = kubeletPort
		latest.Status.Conditions = []corev1.NodeCondition{{
			Type: corev1.NodeReady, Status: ready, Reason: reason,
			LastHeartbeatTime: now, LastTransitionTime: now,
		}}
		_, err = kube.CoreV1().Nodes().UpdateStatus(ctx, latest, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("set status of node %s: %w", n.name, err)
	}
	return nil
}

func initialized(n *corev1.Node) bool {
	return n.Spec.ProviderID != "" && !hasTaint(n, cloudproviderapi.TaintExternalCloudProvider)
}

func hasTaint(n *corev1.Node, key string) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == key {
			return true
		}
	}
	return false
}

// progress is what the CCM has done so far.
type progress struct {
	initialized []string // resolvable nodes initialized
	pending     []string // resolvable nodes not yet initialized
	shutdown    bool
	deleted     bool
	event       *corev1.Event
}

func (p progress) done() bool {
	return len(p.pending) == 0 && p.shutdown && p.deleted && p.event != nil
}

func (p progress) String() string {
	return fmt.Sprintf("initialized %d/%d, shutdown taint %s, terminated node deleted %s, %s event %s",
		len(p.initialized), len(p.initialized)+len(p.pending), yesNo(p.shutdown), yesNo(p.deleted),
		awscloud.ReasonNodeNotResolvable, yesNo(p.event != nil))
}

// missing names what has not happened yet.
func (p progress) missing(pl plan) string {
	var m []string
	if len(p.pending) > 0 {
		m = append(m, "nodes not initialized (providerID set, uninitialized taint gone): "+strings.Join(p.pending, ", "))
	}
	if !p.shutdown {
		m = append(m, fmt.Sprintf("node %s of stopped instance %s has no %s taint", pl.stopped.name, pl.stopped.inst.ID, shutdownTaint))
	}
	if !p.deleted {
		m = append(m, fmt.Sprintf("node %s of terminated instance %s was not deleted", pl.terminated.name, pl.terminated.inst.ID))
	}
	if p.event == nil {
		m = append(m, fmt.Sprintf("node %s has no Warning event %s", pl.unresolvable.name, awscloud.ReasonNodeNotResolvable))
	}
	return strings.Join(m, "\n  ")
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// check reads the Nodes and events once.
func check(ctx context.Context, kube kubernetes.Interface, pl plan) (progress, error) {
	var p progress
	for _, n := range pl.resolvable {
		node, err := kube.CoreV1().Nodes().Get(ctx, n.name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return p, fmt.Errorf("node %s of running instance %s was deleted", n.name, n.inst.ID)
		case err != nil:
			return p, err
		case initialized(node):
			p.initialized = append(p.initialized, n.name)
		default:
			p.pending = append(p.pending, n.name)
		}
	}
	node, err := kube.CoreV1().Nodes().Get(ctx, pl.stopped.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return p, fmt.Errorf("node %s of stopped instance %s was deleted", pl.stopped.name, pl.stopped.inst.ID)
	} else if err != nil {
		return p, err
	}
	p.shutdown = hasTaint(node, shutdownTaint)
	_, err = kube.CoreV1().Nodes().Get(ctx, pl.terminated.name, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return p, err
	}
	p.deleted = apierrors.IsNotFound(err)
	evs, err := nodeEvents(ctx, kube, pl.unresolvable.name)
	if err != nil {
		return p, err
	}
	for i := range evs {
		if evs[i].Type == corev1.EventTypeWarning && evs[i].Reason == awscloud.ReasonNodeNotResolvable {
			p.event = &evs[i]
		}
	}
	return p, nil
}

func nodeEvents(ctx context.Context, kube kubernetes.Interface, name string) ([]corev1.Event, error) {
	list, err := kube.CoreV1().Events("").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.kind=Node,involvedObject.name=" + name})
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}

// waitOutcome polls until everything expected happened, showing progress
// on stderr, and fails after timeout naming what did not happen.
func waitOutcome(ctx context.Context, kube kubernetes.Interface, pl plan, ccm *childproc.Process, timeout time.Duration) (progress, error) {
	start := time.Now()
	tty := isTerminal(os.Stderr)
	var last string
	show := func(p progress) {
		line := p.String()
		switch {
		case tty:
			fmt.Fprintf(os.Stderr, "\r\033[Kdemo: waiting: %s (%ds)", line, int(time.Since(start).Seconds()))
		case line != last:
			fmt.Fprintf(os.Stderr, "demo: waiting: %s (%ds)\n", line, int(time.Since(start).Seconds()))
		}
		last = line
	}
	defer func() {
		if tty {
			fmt.Fprintln(os.Stderr)
		}
	}()
	var p progress
	for {
		var err error
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		p, err = check(cctx, kube, pl)
		cancel()
		if err != nil && ctx.Err() == nil && !errors.Is(err, context.DeadlineExceeded) {
			return p, err
		}
		show(p)
		if err == nil && p.done() {
			return p, nil
		}
		if ccm.Exited() {
			return p, ccm.ExitError(3000)
		}
		if time.Since(start) > timeout {
			return p, fmt.Errorf("after %s the CCM had still not done this:\n  %s\n(CCM log: %s)", timeout, p.missing(pl), ccm.LogPath)
		}
		select {
		case <-ctx.Done():
			return p, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
