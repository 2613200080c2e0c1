package clusterchecks

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/awsccmctl/awsccmctl/internal/preflight"
	"github.com/awsccmctl/awsccmctl/internal/preflight/nodechecks"
)

// podImages returns the images of every container of p: init, regular and
// ephemeral.
func podImages(p *corev1.Pod) []string {
	var out []string
	for _, c := range p.Spec.InitContainers {
		out = append(out, c.Image)
	}
	for _, c := range p.Spec.Containers {
		out = append(out, c.Image)
	}
	for _, c := range p.Spec.EphemeralContainers {
		out = append(out, c.Image)
	}
	return out
}

func (r *runner) ecrCredentialProvider(ctx context.Context) preflight.Result {
	pods, err := r.snap.Pods(ctx)
	if err != nil {
		return preflight.Fail(readFix(err), "%v", err)
	}
	images, nodes := map[string]bool{}, map[string]bool{}
	users, unscheduled := 0, 0
	for i := range pods {
		p := &pods[i]
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		uses := false
		for _, img := range podImages(p) {
			if _, ok := nodechecks.ECRRegistry(img); ok {
				images[img], uses = true, true
			}
		}
		switch {
		case !uses:
		case p.Spec.NodeName == "":
			users++
			unscheduled++
		default:
			users++
			nodes[p.Spec.NodeName] = true
		}
	}
	if users == 0 {
		return preflight.Pass("no Pod uses an image from a private ECR registry (%s)", plural(len(pods), "Pod"))
	}
	var where []string
	if len(nodes) > 0 {
		where = append(where, fmt.Sprintf("on %s (%s)", plural(len(nodes), "Node"), listNames(slices.Sorted(maps.Keys(nodes)))))
	}
	if unscheduled > 0 {
		where = append(where, fmt.Sprintf("%d not scheduled yet", unscheduled))
	}
	return preflight.Fail("on each of these Nodes, "+nodechecks.ECRProviderSetup+"; Pods whose imagePullSecrets carry current ECR credentials do not need it",
		"%s %s use %s from private ECR registries: %s; the in-tree AWS provider gave the kubelet built-in ECR credentials, which were removed in Kubernetes 1.27, "+
			"so the kubelet of those Nodes needs the %s image credential provider or it cannot pull an ECR image it has not cached; `awsccmctl preflight --node` on a node verifies it (check %s)",
		plural(users, "Pod"), strings.Join(where, ", "), counted(len(images), "image", "images"), listNames(slices.Sorted(maps.Keys(images))), nodechecks.ECRProviderName, nodechecks.IDKubeletECRProvider)
}
