package staticpod

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// apiTimeout bounds each call to the apiserver.
const apiTimeout = 10 * time.Second

// syncMirror makes the mirror Pod of the current manifest exist with its
// hash: an existing one of another hash is deleted and created anew (a
// Pod's spec cannot be updated), as the kubelet does.
func (w *worker) syncMirror(ctx context.Context) error {
	cs := w.r.opts.Client
	if cs == nil {
		return nil
	}
	m := w.cur
	ctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	pods := cs.CoreV1().Pods(m.pod.Namespace)
	existing, err := pods.Get(ctx, m.pod.Name, metav1.GetOptions{})
	switch {
	case err == nil && existing.DeletionTimestamp == nil && existing.Annotations[AnnotationConfigMirror] == m.hash:
		w.setMirrorUID(existing.UID)
		return nil
	case err == nil:
		if err := deletePod(ctx, cs, existing.Namespace, existing.Name, existing.UID); err != nil {
			return fmt.Errorf("delete the old mirror Pod %s/%s: %w", existing.Namespace, existing.Name, err)
		}
	case !apierrors.IsNotFound(err):
		return err
	}
	pod := m.pod.DeepCopy()
	pod.Annotations[AnnotationConfigMirror] = m.hash
	if node, err := cs.CoreV1().Nodes().Get(ctx, w.r.opts.NodeName, metav1.GetOptions{}); err == nil {
		pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID}}
	}
	for {
		created, err := pods.Create(ctx, pod, metav1.CreateOptions{})
		if err == nil {
			w.setMirrorUID(created.UID)
			return nil
		}
		if !apierrors.IsAlreadyExists(err) { // else the old one is still going
			return fmt.Errorf("create mirror Pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("create mirror Pod %s/%s: %w", pod.Namespace, pod.Name, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (w *worker) setMirrorUID(uid types.UID) {
	w.r.mu.Lock()
	w.mirrorUID = uid
	w.r.mu.Unlock()
}

// deleteMirror deletes the mirror Pod of the manifest that is gone.
func (w *worker) deleteMirror(ctx context.Context) {
	cs := w.r.opts.Client
	if cs == nil || w.cur == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	w.r.mu.Lock()
	uid := w.mirrorUID
	w.r.mu.Unlock()
	ns, name := w.cur.pod.Namespace, w.cur.pod.Name
	if uid == "" { // never written: delete what mirrors this hash
		p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil || p.Annotations[AnnotationConfigMirror] != w.cur.hash {
			return
		}
		uid = p.UID
	}
	if err := deletePod(ctx, cs, ns, name, uid); err != nil {
		w.r.record(&ManifestError{Path: w.r.nodePath(w.file), Err: fmt.Errorf("delete mirror Pod: %w", err)})
	}
}

// deletePod deletes a Pod at once (grace period 0: no kubelet confirms
// it), only if it still has this UID. Gone already is fine.
func deletePod(ctx context.Context, cs kubernetes.Interface, ns, name string, uid types.UID) error {
	zero := int64(0)
	err := cs.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{
		GracePeriodSeconds: &zero,
		Preconditions:      &metav1.Preconditions{UID: &uid},
	})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil // gone, or already replaced by another
	}
	return err
}

// deleteOrphans deletes the mirror Pods bound to node whose
// "namespace/name" is not in want.
func deleteOrphans(ctx context.Context, cs kubernetes.Interface, node string, want map[string]bool, logf func(string, ...any)) {
	ctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	list, err := cs.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("spec.nodeName", node).String(),
	})
	if err != nil {
		logf("staticpod: list the Pods of node %s: %v", node, err)
		return
	}
	for _, p := range list.Items {
		if _, mirror := p.Annotations[AnnotationConfigMirror]; !mirror || want[p.Namespace+"/"+p.Name] {
			continue
		}
		if err := deletePod(ctx, cs, p.Namespace, p.Name, p.UID); err != nil {
			logf("staticpod: delete orphaned mirror Pod %s/%s: %v", p.Namespace, p.Name, err)
		}
	}
}

// updateStatus writes the mirror Pod's status from the worker's state,
// best effort: a failure is logged only.
func (w *worker) updateStatus(ctx context.Context) {
	cs := w.r.opts.Client
	if cs == nil || w.cur == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	w.r.mu.Lock()
	uid := w.mirrorUID
	w.r.mu.Unlock()
	if uid == "" {
		return
	}
	pods := cs.CoreV1().Pods(w.cur.pod.Namespace)
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		var p *corev1.Pod
		if p, err = pods.Get(ctx, w.cur.pod.Name, metav1.GetOptions{}); err != nil {
			break
		}
		if p.UID != uid {
			return // replaced meanwhile
		}
		p.Status = w.podStatus(p.Status)
		if _, err = pods.UpdateStatus(ctx, p, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
			break
		}
	}
	if err != nil && ctx.Err() == nil {
		w.r.opts.Logf("staticpod: %s: mirror Pod status: %v", w.r.nodePath(w.file), err)
	}
}

// podStatus is the status the kubelet would report: phase Running while
// the manifest is there, the component's container running or in
// CrashLoopBackOff with its restart count, every other container running.
func (w *worker) podStatus(old corev1.PodStatus) corev1.PodStatus {
	w.r.mu.Lock()
	defer w.r.mu.Unlock()
	m := w.cur
	now := metav1.Now()
	since := func(t time.Time) metav1.Time {
		if t.IsZero() {
			return now
		}
		return metav1.NewTime(t)
	}
	ready := m.binary == "" || w.proc != nil
	st := corev1.PodStatus{
		Phase:     corev1.PodRunning,
		StartTime: old.StartTime,
		QOSClass:  old.QOSClass,
	}
	if st.StartTime == nil {
		t := since(w.firstStart)
		st.StartTime = &t
	}
	cond := func(t corev1.PodConditionType, ok bool) corev1.PodCondition {
		s := corev1.ConditionTrue
		if !ok {
			s = corev1.ConditionFalse
		}
		c := corev1.PodCondition{Type: t, Status: s, LastTransitionTime: now}
		for _, o := range old.Conditions {
			if o.Type == t && o.Status == s {
				c.LastTransitionTime = o.LastTransitionTime
			}
		}
		return c
	}
	st.Conditions = []corev1.PodCondition{
		cond(corev1.PodScheduled, true), cond(corev1.PodInitialized, true),
		cond(corev1.ContainersReady, ready), cond(corev1.PodReady, ready),
	}
	for _, c := range m.pod.Spec.Containers {
		cst := corev1.ContainerStatus{Name: c.Name, Image: c.Image, ImageID: c.Image, Ready: true, Started: ptr(true)}
		cst.State.Running = &corev1.ContainerStateRunning{StartedAt: since(w.firstStart)}
		if c.Name == m.container && m.binary != "" {
			cst.RestartCount = int32(max(w.verStarts-1, 0))
			if w.proc != nil {
				cst.State.Running.StartedAt = metav1.NewTime(w.startedAt)
			} else {
				cst.Ready, cst.Started = false, ptr(false)
				cst.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}
			}
			if n := len(w.exits); n > 0 && w.verStarts > 0 && !w.exits[n-1].Stopped {
				e := w.exits[n-1]
				reason, code := "Error", int32(e.Code)
				switch {
				case e.Code == 0:
					reason = "Completed"
				case e.Code < 0:
					code = 137 // a signal: shown as the runtime shows SIGKILL
				}
				cst.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{
					ExitCode: code, Reason: reason, Message: e.Status,
					StartedAt: metav1.NewTime(e.At.Add(-e.Ran)), FinishedAt: metav1.NewTime(e.At),
				}
			}
		}
		st.ContainerStatuses = append(st.ContainerStatuses, cst)
	}
	return st
}

func ptr[T any](v T) *T { return &v }
