package migrate

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// NodePods runs the node steps as one Pod per node (apply --node-runner=pods)
// instead of waiting for the operator to run the node command on each
// node. Each Pod runs `awsccmctl migrate-from-intree node` on its node with
// the host's file system at /host, the host's PID and network namespaces
// (to see the running kubelet and kube-controller-manager, and reach their
// /healthz on 127.0.0.1) and privileged (to edit the host's files and
// restart the kubelet with the host's systemctl): the same command, the
// same backups and reports as the operator's run, reported with the
// node's own kubelet credentials.
type NodePods struct {
	// Image holds awsccmctl at /usr/local/bin/awsccmctl.
	Image string
	// Namespace of the Pods (default kube-system).
	Namespace string
	// MaxUnavailable is how many nodes of a kubelet step run their Pod at
	// once (a number or a percentage of the step's nodes, rounded down, at
	// least 1). Control-plane steps always run one node at a time, in the
	// order apply prints.
	MaxUnavailable intstr.IntOrString
	// Wait is the node command's --wait (0: its default).
	Wait time.Duration
}

// Labels and annotations of the node-step Pods.
const (
	nodePodName      = "awsccmctl-node-step"
	labelStepHash    = "migrate.awsccmctl.io/step-hash"
	annotationStep   = "migrate.awsccmctl.io/step"
	annotationNode   = "migrate.awsccmctl.io/node"
	nodePodContainer = "node"
	// NodePodBinary is where the image holds awsccmctl.
	NodePodBinary = "/usr/local/bin/awsccmctl"
	// nodePodHostRoot is where the Pod sees the host's /.
	nodePodHostRoot = "/host"
)

// Validate checks the options before a run starts.
func (p *NodePods) Validate() error {
	if p.Image == "" {
		return errors.New("--node-image: empty; the node-step Pods need an image holding awsccmctl at " + NodePodBinary)
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(&p.MaxUnavailable, 100, false)
	switch {
	case err != nil:
		return fmt.Errorf("--max-unavailable %q: want a number or a percentage: %w", p.MaxUnavailable.String(), err)
	case n < 1:
		return fmt.Errorf("--max-unavailable %q: want at least 1 node (or a percentage over 0)", p.MaxUnavailable.String())
	}
	return nil
}

func (p *NodePods) namespace() string {
	if p.Namespace == "" {
		return metav1.NamespaceSystem
	}
	return p.Namespace
}

// concurrency is how many of a step's nodes run their Pod at once.
func (p *NodePods) concurrency(phase, scope string, nodes int) int {
	if touchesKCMPhase(phase, scope) {
		return 1 // the Leases must change hands once, in apply's order
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(&p.MaxUnavailable, nodes, false)
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// stepHash names one run of a step (its undo is another) in Pod labels:
// step names hold a "/", which a label value cannot.
func stepHash(step string, undo bool) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%s|%t", step, undo))
	return fmt.Sprintf("%x", sum[:5])
}

// nodePodName is the Pod of one node in one run of a step: the same name
// on a resumed run, so a Pod that already succeeded is not run again.
func nodePodNameOf(step string, undo bool, node string) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%s|%t|%s", step, undo, node))
	return fmt.Sprintf("%s-%x", nodePodName, sum[:6])
}

// pod renders the Pod that runs phase (with scope) on node.
func (p *NodePods) pod(step string, undo bool, node, phase, scope string) *corev1.Pod {
	args := []string{"migrate-from-intree", "node", "--phase=" + phase}
	if scope != "" {
		args = append(args, "--scope="+scope)
	}
	args = append(args, "--root="+nodePodHostRoot, "--node-name="+node, "--kubelet-credentials", "--chroot-systemctl")
	if p.Wait > 0 {
		args = append(args, "--wait="+p.Wait.String())
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:      nodePodNameOf(step, undo, node),
			Namespace: p.namespace(),
			Labels: map[string]string{
				"app.kubernetes.io/name":       nodePodName,
				"app.kubernetes.io/managed-by": "awsccmctl",
				labelStepHash:                  stepHash(step, undo),
			},
			Annotations: map[string]string{annotationStep: step, annotationNode: node},
		},
		Spec: corev1.PodSpec{
			// Bound to its node: no scheduler, and no other node runs it.
			NodeName:                      node,
			HostPID:                       true,
			HostNetwork:                   true,
			DNSPolicy:                     corev1.DNSClusterFirstWithHostNet,
			RestartPolicy:                 corev1.RestartPolicyNever,
			AutomountServiceAccountToken:  ptr.To(false),
			PriorityClassName:             "system-node-critical",
			TerminationGracePeriodSeconds: ptr.To[int64](30),
			// A node tainted for any reason still runs its step.
			Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			Containers: []corev1.Container{{
				Name:    nodePodContainer,
				Image:   p.Image,
				Command: append([]string{NodePodBinary}, args...),
				SecurityContext: &corev1.SecurityContext{
					Privileged: ptr.To(true),
					RunAsUser:  ptr.To[int64](0),
				},
				VolumeMounts:             []corev1.VolumeMount{{Name: "host", MountPath: nodePodHostRoot}},
				TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
			}},
			Volumes: []corev1.Volume{{Name: "host", VolumeSource: corev1.VolumeSource{
				HostPath: &corev1.HostPathVolumeSource{Path: "/", Type: ptr.To(corev1.HostPathDirectory)},
			}}},
		},
	}
}

// nodePodRollout runs one step's Pods: at most concurrency at a time, in
// order, each node once; a Pod that fails stops the rollout and the step.
type nodePodRollout struct {
	pods        *NodePods
	e           *env
	step        string
	undo        bool
	phase       string
	scope       string
	nodes       []string
	concurrency int
	poll        time.Duration
	printf      func(string, ...any)
	// shown is the progress last shown (report).
	shown string
}

// podsOf lists the rollout's Pods by node.
func (ro *nodePodRollout) podsOf(ctx context.Context) (map[string]*corev1.Pod, error) {
	sel := labels.SelectorFromSet(labels.Set{labelStepHash: stepHash(ro.step, ro.undo)}).String()
	list, err := ro.e.client.CoreV1().Pods(ro.pods.namespace()).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, fmt.Errorf("list the node-step Pods: %w", err)
	}
	out := map[string]*corev1.Pod{}
	for i := range list.Items {
		pod := &list.Items[i]
		if pod.DeletionTimestamp == nil {
			out[pod.Annotations[annotationNode]] = pod
		}
	}
	return out, nil
}

// run rolls the Pods out until every node's Pod succeeded (then it waits
// for ctx: the gate decides when the step is done), or one failed, which
// it returns.
func (ro *nodePodRollout) run(ctx context.Context) error {
	// A Pod that failed in an earlier run of this step is run again.
	if pods, err := ro.podsOf(ctx); err == nil {
		for node, pod := range pods {
			if pod.Status.Phase == corev1.PodFailed {
				ro.printf("  node step Pod %s on %s failed in an earlier run: deleted, to run it again", pod.Name, node)
				_ = ro.e.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{})
			}
		}
	}
	for {
		pods, err := ro.podsOf(ctx)
		if err != nil {
			ro.printf("  %v (retrying)", err)
		} else {
			done, err := ro.advance(ctx, pods)
			if err != nil {
				return err // after the step ended, the caller's cancel ignores it
			}
			ro.report(pods)
			if done {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(ro.poll):
		}
	}
}

// report shows the rollout's progress: on the status line, or printed when
// it changed since it was last shown.
func (ro *nodePodRollout) report(pods map[string]*corev1.Pod) {
	s := ro.progress(pods)
	if ro.e.status != nil {
		ro.e.status.setPods(s)
	} else if s != ro.shown {
		ro.printf("  node step Pods: %s", s)
	}
	ro.shown = s
}

// finalReport shows the Pods as they are once the gate passed: the gate
// reads the nodes' reports, and may pass before the rollout's next poll
// saw the last Pods succeed.
func (ro *nodePodRollout) finalReport(ctx context.Context) {
	if pods, err := ro.podsOf(ctx); err == nil {
		ro.report(pods)
	}
}

// advance starts Pods on the next nodes while fewer than concurrency run,
// and says whether every node's Pod succeeded.
func (ro *nodePodRollout) advance(ctx context.Context, pods map[string]*corev1.Pod) (bool, error) {
	inFlight, succeeded := 0, 0
	for _, n := range ro.nodes {
		pod, ok := pods[n]
		switch {
		case !ok:
		case pod.Status.Phase == corev1.PodSucceeded:
			succeeded++
		case pod.Status.Phase == corev1.PodFailed:
			return false, fmt.Errorf("the node step on %s failed in Pod %s/%s: %s; its log: kubectl logs -n %s %s (the Pod is kept; a resume runs it again)",
				n, pod.Namespace, pod.Name, podFailure(pod), pod.Namespace, pod.Name)
		default:
			inFlight++
		}
	}
	if succeeded == len(ro.nodes) {
		return true, nil
	}
	for _, n := range ro.nodes {
		if inFlight >= ro.concurrency {
			break
		}
		if _, ok := pods[n]; ok {
			continue
		}
		pod := ro.pods.pod(ro.step, ro.undo, n, ro.phase, ro.scope)
		_, err := ro.e.client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
		switch {
		case err == nil, apierrors.IsAlreadyExists(err):
		case ctx.Err() != nil:
			return false, ctx.Err() // the step ended meanwhile
		default:
			return false, fmt.Errorf("create the node step Pod for %s: %w", n, err)
		}
		pods[n] = pod
		inFlight++
	}
	return false, nil
}

// progress says where the rollout stands, naming the nodes in flight.
func (ro *nodePodRollout) progress(pods map[string]*corev1.Pod) string {
	var done, waiting int
	var running []string
	for _, n := range ro.nodes {
		pod, ok := pods[n]
		switch {
		case !ok:
			waiting++
		case pod.Status.Phase == corev1.PodSucceeded:
			done++
		default:
			running = append(running, n+" ("+podState(pod)+")")
		}
	}
	const shown = 5
	list := strings.Join(running[:min(len(running), shown)], ", ")
	if len(running) > shown {
		list += fmt.Sprintf(" and %d more", len(running)-shown)
	}
	s := fmt.Sprintf("%d of %d nodes done, %d to start (at most %d at once)", done, len(ro.nodes), waiting, ro.concurrency)
	if list != "" {
		s += "; running on " + list
	}
	return s
}

// podState is a Pod's phase, or what keeps its container from running.
func podState(pod *corev1.Pod) string {
	for _, c := range pod.Status.ContainerStatuses {
		if w := c.State.Waiting; w != nil && w.Reason != "" {
			return w.Reason
		}
	}
	if pod.Status.Phase == "" {
		return "created"
	}
	return string(pod.Status.Phase)
}

// podFailure is why a Pod failed: its container's exit and message (the
// node command's last lines: FallbackToLogsOnError), else the Pod's.
func podFailure(pod *corev1.Pod) string {
	for _, c := range pod.Status.ContainerStatuses {
		if t := c.State.Terminated; t != nil {
			msg := strings.TrimSpace(t.Message)
			if msg == "" {
				msg = t.Reason
			}
			return fmt.Sprintf("exit %d: %s", t.ExitCode, msg)
		}
	}
	if pod.Status.Message != "" {
		return pod.Status.Reason + ": " + pod.Status.Message
	}
	return "phase Failed"
}

// cleanup deletes the rollout's Pods once the step passed its gate.
func (ro *nodePodRollout) cleanup(ctx context.Context) {
	pods, err := ro.podsOf(ctx)
	if err != nil {
		ro.printf("  %v: delete the node step Pods labelled %s=%s by hand", err, labelStepHash, stepHash(ro.step, ro.undo))
		return
	}
	for _, n := range slices.Sorted(maps.Keys(pods)) {
		pod := pods[n]
		if err := ro.e.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			ro.printf("  delete node step Pod %s/%s: %v", pod.Namespace, pod.Name, err)
		}
	}
	if len(pods) > 0 {
		ro.printf("  deleted the %d node step Pods", len(pods))
	}
}
