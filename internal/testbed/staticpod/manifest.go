package staticpod

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/awsccmctl/awsccmctl/internal/nodefiles"
)

// Annotations the kubelet puts on static Pods and their mirror Pods.
// Cluster-side readers (kubeadm, preflight checks) look for them: the names
// MUST NOT change.
const (
	// AnnotationConfigMirror marks a mirror Pod; its value is the static
	// Pod's hash.
	AnnotationConfigMirror = "kubernetes.io/config.mirror"
	// AnnotationConfigHash is the static Pod's hash.
	AnnotationConfigHash = "kubernetes.io/config.hash"
	// AnnotationConfigSource is where the Pod came from: "file" here.
	AnnotationConfigSource = "kubernetes.io/config.source"
	// AnnotationConfigSeen is when the kubelet first saw this version.
	AnnotationConfigSeen = "kubernetes.io/config.seen"
)

// DefaultManifestDir is the kubelet's staticPodPath on kubeadm and kops
// nodes.
const DefaultManifestDir = "/etc/kubernetes/manifests"

// knownComponents are recognised in a command line besides the keys of
// Options.Binaries.
var knownComponents = []string{
	"kube-apiserver", "kube-controller-manager", "kube-scheduler", "etcd",
	"cloud-controller-manager", "aws-cloud-controller-manager",
}

// manifest is one decoded static Pod and what running it takes.
type manifest struct {
	file string      // base name in the manifest folder
	pod  *corev1.Pod // as the kubelet sees it: name-node, namespace, nodeName, annotations
	hash string

	component string   // "" when no container runs a known component
	container string   // the container that runs it
	binary    string   // host binary; "" when the component is not run
	args      []string // arguments after the binary, paths resolved
	env       []string
	volumes   []hostPathVolume // to create or check before a start
}

// hostPathVolume is a hostPath volume, its path already under the root.
type hostPathVolume struct {
	name, path string
	typ        corev1.HostPathType
}

// decodePod decodes a manifest strictly as a v1 Pod and checks what the
// kubelet needs to run it: a name and at least one container.
func decodePod(data []byte) (*corev1.Pod, error) {
	j, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, fmt.Errorf("not valid YAML: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.DisallowUnknownFields()
	var pod corev1.Pod
	if err := dec.Decode(&pod); err != nil {
		return nil, fmt.Errorf("not a Pod: %w", err)
	}
	if pod.APIVersion != "v1" || pod.Kind != "Pod" {
		return nil, fmt.Errorf("apiVersion %q kind %q, want v1 Pod", pod.APIVersion, pod.Kind)
	}
	if pod.Name == "" {
		return nil, errors.New("metadata.name is empty")
	}
	if len(pod.Spec.Containers) == 0 {
		return nil, errors.New("the Pod has no containers")
	}
	return &pod, nil
}

// podHash identifies a decoded Pod on a node: it changes when the content
// changes, not with whitespace or comments.
func podHash(pod *corev1.Pod, nodeName string) string {
	j, _ := json.Marshal(pod) // a decoded Pod always encodes
	h := sha256.New()
	h.Write(j)
	h.Write([]byte{0})
	h.Write([]byte(nodeName))
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// applyDefaults turns a manifest's Pod into the static Pod the kubelet
// runs, as its file source does: name "<name>-<node>", namespace "default"
// when empty, spec.nodeName, a toleration of every NoExecute taint, and the
// config annotations.
func applyDefaults(pod *corev1.Pod, nodeName, hash, seen string) {
	pod.Name = pod.Name + "-" + strings.ToLower(nodeName)
	if pod.Namespace == "" {
		pod.Namespace = corev1.NamespaceDefault
	}
	pod.Spec.NodeName = nodeName
	pod.Spec.Tolerations = append(pod.Spec.Tolerations, corev1.Toleration{
		Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute,
	})
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[AnnotationConfigHash] = hash
	pod.Annotations[AnnotationConfigSource] = "file"
	pod.Annotations[AnnotationConfigSeen] = seen
	pod.Status = corev1.PodStatus{}
}

// findComponent returns the index of the container that runs a known
// component, the component and the words after its binary; -1 when none
// does. The binary is found by the rule preflight and the migration read
// manifests with (nodefiles.ContainerCommand: after a wrapper such as kops's
// /go-runner, or inside `sh -c`), so the test bed runs what they read.
func findComponent(pod *corev1.Pod, known func(string) bool) (int, string, []string) {
	for i := range pod.Spec.Containers {
		if comp, argv := nodefiles.ContainerCommand(&pod.Spec.Containers[i], known); comp != "" {
			return i, comp, argv[1:]
		}
	}
	return -1, "", nil
}

// resolveArgs rewrites the absolute paths among args through the
// container's hostPath mounts (see the package documentation).
func resolveArgs(args []string, c *corev1.Container, volumes []corev1.Volume, root string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		switch {
		case strings.HasPrefix(a, "-"):
			name, val, ok := strings.Cut(a, "=")
			if ok && path.IsAbs(val) {
				if p, ok := resolvePath(val, c, volumes, root); ok {
					a = name + "=" + p
				}
			}
		case path.IsAbs(a):
			if p, ok := resolvePath(a, c, volumes, root); ok {
				a = p
			}
		}
		out[i] = a
	}
	return out
}

// resolvePath maps a container path to the host file under root that the
// container would see there, through the longest hostPath mount holding it.
func resolvePath(p string, c *corev1.Container, volumes []corev1.Volume, root string) (string, bool) {
	p = path.Clean(p)
	best := -1
	var rest string
	for i, m := range c.VolumeMounts {
		mp := path.Clean(m.MountPath)
		r, ok := under(p, mp)
		if !ok || (best >= 0 && len(mp) <= len(path.Clean(c.VolumeMounts[best].MountPath))) {
			continue
		}
		best, rest = i, r
	}
	if best < 0 {
		return p, false
	}
	m := c.VolumeMounts[best]
	for _, v := range volumes {
		if v.Name == m.Name && v.HostPath != nil {
			return underRoot(root, v.HostPath.Path, m.SubPath, rest), true
		}
	}
	return p, false // not a hostPath volume, or no such volume
}

// underRoot joins node path elements below root; ".." cannot climb out of
// it (the apiserver refuses backsteps in hostPath and subPath anyway).
func underRoot(root string, elem ...string) string {
	return filepath.Join(root, filepath.FromSlash(path.Clean("/"+path.Join(elem...))))
}

// under reports whether p is dir or lies below it, and the remainder.
func under(p, dir string) (string, bool) {
	switch {
	case p == dir:
		return "", true
	case dir == "/":
		return strings.TrimPrefix(p, "/"), true
	case strings.HasPrefix(p, dir+"/"):
		return p[len(dir)+1:], true
	}
	return "", false
}

// hostPathVolumes lists the Pod's hostPath volumes with their paths under
// root, in a stable order.
func hostPathVolumes(pod *corev1.Pod, root string) []hostPathVolume {
	var out []hostPathVolume
	for _, v := range pod.Spec.Volumes {
		if v.HostPath == nil {
			continue
		}
		var typ corev1.HostPathType
		if v.HostPath.Type != nil {
			typ = *v.HostPath.Type
		}
		out = append(out, hostPathVolume{name: v.Name, path: underRoot(root, v.HostPath.Path), typ: typ})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// prepare creates (…OrCreate) or checks a hostPath volume as the kubelet
// does before it starts the Pod.
func (v hostPathVolume) prepare() error {
	st, err := os.Stat(v.path)
	missing := errors.Is(err, fs.ErrNotExist)
	if err != nil && !missing {
		return fmt.Errorf("hostPath volume %q: %w", v.name, err)
	}
	want := func(ok bool, what string) error {
		switch {
		case missing:
			return fmt.Errorf("hostPath volume %q (type %s): %s does not exist", v.name, v.typ, v.path)
		case !ok:
			return fmt.Errorf("hostPath volume %q (type %s): %s is not a %s", v.name, v.typ, v.path, what)
		}
		return nil
	}
	switch v.typ {
	case corev1.HostPathDirectoryOrCreate:
		if missing {
			return os.MkdirAll(v.path, 0o755)
		}
		return want(st.IsDir(), "directory")
	case corev1.HostPathFileOrCreate:
		if missing {
			if err := os.MkdirAll(filepath.Dir(v.path), 0o755); err != nil {
				return err
			}
			f, err := os.OpenFile(v.path, os.O_CREATE|os.O_WRONLY, 0o644)
			if err != nil {
				return err
			}
			return f.Close()
		}
		return want(st.Mode().IsRegular(), "file")
	case corev1.HostPathDirectory:
		return want(err == nil && st.IsDir(), "directory")
	case corev1.HostPathFile:
		return want(err == nil && st.Mode().IsRegular(), "file")
	case corev1.HostPathSocket:
		return want(err == nil && st.Mode()&fs.ModeSocket != 0, "socket")
	case corev1.HostPathCharDev:
		return want(err == nil && st.Mode()&fs.ModeCharDevice != 0, "character device")
	case corev1.HostPathBlockDev:
		return want(err == nil && st.Mode()&fs.ModeDevice != 0 && st.Mode()&fs.ModeCharDevice == 0, "block device")
	default:
		// An unset type is not checked, as the kubelet does.
	}
	return nil // no type: no check, as the kubelet
}

// containerEnv returns the container's literal environment values;
// valueFrom cannot be resolved here and is left out.
func containerEnv(c *corev1.Container) []string {
	var env []string
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			env = append(env, e.Name+"="+e.Value)
		}
	}
	return env
}
