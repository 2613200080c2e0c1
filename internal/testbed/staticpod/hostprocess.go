package staticpod

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/awsccmctl/awsccmctl/internal/nodefiles"
)

// HostProcess is how one container of a Pod runs as a process of a host
// binary on a fake node, planned by the rules the Runner applies to a
// manifest (see the package documentation, "From manifest to process" and
// "Paths"). It is exported for internal/testbed/nodepods, which runs the
// Pods the apiserver binds to a fake node by the same rules.
type HostProcess struct {
	// Component is the base name of the word of the container's command
	// that names a known binary.
	Component string
	// Args are the words after it, absolute paths rewritten through the
	// container's hostPath mounts to files under the node's root.
	Args []string
	// Env is the container's literal environment (valueFrom is left out).
	Env []string
}

// PlanHostProcess plans container i of pod on the fake node whose root
// folder is root; isComponent says which base names are known binaries.
// ok is false when the container's command names none.
func PlanHostProcess(pod *corev1.Pod, i int, root string, isComponent func(base string) bool) (hp HostProcess, ok bool) {
	c := &pod.Spec.Containers[i]
	// The rule of findComponent, for one container.
	comp, argv := nodefiles.ContainerCommand(c, isComponent)
	if comp == "" {
		return HostProcess{}, false
	}
	return HostProcess{
		Component: comp,
		Args:      resolveArgs(argv[1:], c, pod.Spec.Volumes, root),
		Env:       containerEnv(c),
	}, true
}

// PrepareHostPaths creates (DirectoryOrCreate, FileOrCreate) or checks
// (the other types) the Pod's hostPath volumes under root, as the kubelet
// does before it starts a Pod; the first failure is returned.
func PrepareHostPaths(pod *corev1.Pod, root string) error {
	for _, v := range hostPathVolumes(pod, root) {
		if err := v.prepare(); err != nil {
			return err
		}
	}
	return nil
}
