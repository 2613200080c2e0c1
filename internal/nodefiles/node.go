package nodefiles

import (
	"fmt"
	"os"
	"slices"
)

// Node is what was found on one node's disk.
type Node struct {
	// Root is the directory read as "/".
	Root string
	// StaticPods holds the static Pods found, by component: "kube-apiserver",
	// "kube-controller-manager", "kube-scheduler" or "etcd".
	StaticPods map[string]*StaticPod
	// Kubelet is nil when no kubelet unit, environment file or
	// configuration file was found.
	Kubelet *Kubelet
	// Files lists every file read successfully, as node paths, in order.
	Files []string
	// Problems lists files that exist but could not be used, each as
	// "path: reason". They are never silently ignored.
	Problems []string
}

// StaticPod is one control-plane static Pod manifest.
type StaticPod struct {
	// Path is the node path of the manifest.
	Path string
	// Component is the Kubernetes component the Pod runs.
	Component string
	// Image is the component container's image.
	Image string
	// Version is the image tag when it is a version ("v1.26.15"), else "".
	Version string
	// Flags is the component's command line, from its binary on.
	Flags Flags
}

// Kubelet is the kubelet's configuration as systemd would start it.
type Kubelet struct {
	// Flags is the command line merged from every source; later sources win,
	// as systemd would assemble it.
	Flags Flags
	// Sources lists the files that contributed, as node paths, in order.
	Sources []string
	// Unit is the unit or drop-in whose ExecStart= starts the kubelet; ""
	// when the command line was assembled from environment files alone.
	Unit string
	// ConfigPath is the kubelet configuration file (--config, else
	// /var/lib/kubelet/config.yaml when present); "" when there is none.
	ConfigPath string
	// Config is the subset of the configuration file read; nil without one.
	Config *KubeletConfig

	origins  []Origin
	flagFile Origin
}

// KubeletConfig is the subset of a KubeletConfiguration file that preflight
// uses; other fields are allowed and ignored.
type KubeletConfig struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	ProviderID string `json:"providerID"`
	// HealthzPort and HealthzBindAddress are where the kubelet serves
	// /healthz (nil and "": the kubelet's defaults, 10248 and 127.0.0.1).
	HealthzPort        *int32 `json:"healthzPort"`
	HealthzBindAddress string `json:"healthzBindAddress"`
}

// Origin says where a kubelet argument came from.
type Origin struct {
	// File is the node path of the environment file that set the variable,
	// or of the unit or drop-in holding ExecStart= for a literal word.
	File string
	// Variable is the environment variable that carried the argument; ""
	// for a literal ExecStart= word.
	Variable string
}

// Origin returns where the last occurrence of flag came from.
func (k *Kubelet) Origin(flag string) (Origin, bool) {
	fl, ok := k.Flags.last(flag)
	if !ok || fl.pos >= len(k.origins) {
		return Origin{}, false
	}
	return k.origins[fl.pos], true
}

// FlagFile returns where a node-local kubelet flag belongs: the environment
// file and variable the command line takes its flags from
// (KUBELET_KUBEADM_ARGS in kubeadm-flags.env, kops's DAEMON_ARGS,
// KUBELET_EXTRA_ARGS), else the unit holding ExecStart=.
func (k *Kubelet) FlagFile() Origin { return k.flagFile }

// Read reads the node files under root. It fails only when root itself
// cannot be read; problems with single files go to Node.Problems.
func Read(root string) (*Node, error) {
	fi, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("read node files: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("read node files: root %s is not a directory", root)
	}
	if _, err := os.ReadDir(root); err != nil {
		return nil, fmt.Errorf("read node files: %w", err)
	}
	r := fsRoot{dir: root}
	n := &Node{Root: root, StaticPods: map[string]*StaticPod{}}
	readStaticPods(r, n)
	n.Kubelet = readKubelet(r, n)
	return n, nil
}

func (n *Node) problem(path string, format string, a ...any) {
	n.Problems = append(n.Problems, path+": "+fmt.Sprintf(format, a...))
}

func (n *Node) read(path string) {
	if !slices.Contains(n.Files, path) {
		n.Files = append(n.Files, path)
	}
}
