package nodepods

import (
	"context"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
)

const (
	// apiTimeout bounds each write to the apiserver.
	apiTimeout = 10 * time.Second
	// startErrorCode is the exit code container runtimes report for a
	// container that could not start (containerd's StartError).
	startErrorCode = 128
	// containerIDScheme prefixes a container's ID: "<runtime>://<id>", the
	// id being the process's pid here.
	containerIDScheme = "nodepods://"
	// defaultHostIP is the Pod's host IP when the Node has no InternalIP.
	defaultHostIP = "127.0.0.1"
)

// writeStatus applies mutate to the Pod's current status and writes it
// through the status subresource, as the kubelet's status manager does.
// A Pod gone, or replaced by another of the same name, is left alone.
func (w *podWorker) writeStatus(ctx context.Context, mutate func(*corev1.PodStatus)) {
	ctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	pods := w.r.opts.Client.CoreV1().Pods(w.ns)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := pods.Get(ctx, w.name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if cur.UID != w.uid {
			return nil
		}
		mutate(&cur.Status)
		_, err = pods.UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		return err
	})
	if err != nil && !apierrors.IsNotFound(err) && ctx.Err() == nil {
		w.r.record(fmt.Errorf("pod %s/%s: write status: %w", w.ns, w.name, err))
	}
}

// finalize removes a deleted Pod for good (grace period 0, this UID only)
// once its process is gone, as the kubelet does: without a kubelet it would
// stay Terminating forever.
func (w *podWorker) finalize(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	zero := int64(0)
	uid := w.uid
	err := w.r.opts.Client.CoreV1().Pods(w.ns).Delete(ctx, w.name, metav1.DeleteOptions{
		GracePeriodSeconds: &zero,
		Preconditions:      &metav1.Preconditions{UID: &uid},
	})
	switch {
	case err == nil:
		w.logf("removed")
	case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
		// gone already, or the name is another Pod's now
	case ctx.Err() != nil:
		// the Runner stops: the Pod stays, as with a stopped kubelet
	default:
		w.r.record(fmt.Errorf("pod %s/%s: remove: %w", w.ns, w.name, err))
	}
}

// hostIP is the node's InternalIP, the Pod's hostIP (and podIP: the Pods
// run in the host's network).
func (w *podWorker) hostIP(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	node, err := w.r.opts.Client.CoreV1().Nodes().Get(ctx, w.r.opts.NodeName, metav1.GetOptions{})
	if err != nil {
		return defaultHostIP
	}
	for _, a := range node.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			return a.Address
		}
	}
	return defaultHostIP
}

// running is the status of a Pod whose process started.
func running(st *corev1.PodStatus, pod *corev1.Pod, hostIP string, pid int, started time.Time) {
	at := metav1.NewTime(started)
	placed(st, hostIP, at)
	st.Phase = corev1.PodRunning
	setConditions(st, at, corev1.ConditionTrue, "")
	st.ContainerStatuses = containerStatuses(pod, pid, corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at}})
}

// terminated is the status of a Pod whose process ended with code.
func terminated(st *corev1.PodStatus, pod *corev1.Pod, pid, code int, started, finished time.Time) {
	reason := "Completed"
	st.Phase = corev1.PodSucceeded
	if code != 0 {
		st.Phase, reason = corev1.PodFailed, "Error"
	}
	setConditions(st, metav1.NewTime(finished), corev1.ConditionFalse, "PodCompleted")
	st.ContainerStatuses = containerStatuses(pod, pid, corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		ExitCode:    int32(code),
		Reason:      reason,
		StartedAt:   metav1.NewTime(started),
		FinishedAt:  metav1.NewTime(finished),
		ContainerID: containerIDScheme + strconv.Itoa(pid),
	}})
}

// startFailed is the status of a Pod whose container could not start: with
// restartPolicy Never it is Failed, the container terminated with reason
// StartError and the message, as container runtimes report it.
func startFailed(st *corev1.PodStatus, pod *corev1.Pod, hostIP, msg string, at time.Time) {
	now := metav1.NewTime(at)
	placed(st, hostIP, now)
	st.Phase = corev1.PodFailed
	st.Message = msg
	setConditions(st, now, corev1.ConditionFalse, "PodCompleted")
	st.ContainerStatuses = containerStatuses(pod, 0, corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		ExitCode: startErrorCode, Reason: "StartError", Message: msg, StartedAt: now, FinishedAt: now,
	}})
}

// placed sets what the kubelet sets when it takes a Pod on: its start time
// and its IPs (hostNetwork: the host's).
func placed(st *corev1.PodStatus, hostIP string, at metav1.Time) {
	if st.StartTime == nil {
		st.StartTime = &at
	}
	st.HostIP, st.PodIP = hostIP, hostIP
	st.PodIPs = []corev1.PodIP{{IP: hostIP}}
}

// setConditions sets the Pod's conditions as the kubelet does: scheduled
// and initialized, then ready (or not, with reason) with its containers.
func setConditions(st *corev1.PodStatus, at metav1.Time, ready corev1.ConditionStatus, reason string) {
	set := func(t corev1.PodConditionType, s corev1.ConditionStatus, reason string) {
		for i := range st.Conditions {
			if c := &st.Conditions[i]; c.Type == t {
				if c.Status != s {
					c.LastTransitionTime = at
				}
				c.Status, c.Reason = s, reason
				return
			}
		}
		st.Conditions = append(st.Conditions, corev1.PodCondition{Type: t, Status: s, Reason: reason, LastTransitionTime: at})
	}
	set(corev1.PodScheduled, corev1.ConditionTrue, "")
	set(corev1.PodInitialized, corev1.ConditionTrue, "")
	set(corev1.ContainersReady, ready, reason)
	set(corev1.PodReady, ready, reason)
}

// containerStatuses gives the first container state and leaves the others
// waiting: only the first runs on the test bed.
func containerStatuses(pod *corev1.Pod, pid int, state corev1.ContainerState) []corev1.ContainerStatus {
	out := make([]corev1.ContainerStatus, len(pod.Spec.Containers))
	for i, c := range pod.Spec.Containers {
		out[i] = corev1.ContainerStatus{Name: c.Name, Image: c.Image,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "NotRunOnTestBed", Message: "nodepods runs a Pod's first container only"}}}
	}
	if len(out) == 0 {
		return nil
	}
	running := state.Running != nil
	out[0].State, out[0].Ready, out[0].Started = state, running, &running
	if pid > 0 {
		out[0].ContainerID = containerIDScheme + strconv.Itoa(pid)
	}
	return out
}
