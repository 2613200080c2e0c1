package staticpod

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

const kubeadmKCM = `apiVersion: v1
kind: Pod
metadata:
  creationTimestamp: null
  labels:
    component: kube-controller-manager
    tier: control-plane
  name: kube-controller-manager
  namespace: kube-system
spec:
  containers:
  - command:
    - kube-controller-manager
    - --kubeconfig=/etc/kubernetes/controller-manager.conf
    - --root-ca-file
    - /etc/kubernetes/pki/ca.crt
    - --service-account-private-key-file=/etc/kubernetes/pki/sa.key
    - --flex-volume-plugin-dir=/usr/libexec/kubernetes/kubelet-plugins/volume/exec
    - --cloud-config=/etc/kubernetes/cloud.conf
    - --cluster-signing-cert-file=/etc/kubernetes/pki/../pki/ca.crt
    - --cert-dir=/var/run/kubernetes
    - --controllers=*,bootstrapsigner,tokencleaner
    - --bind-address=127.0.0.1
    image: registry.k8s.io/kube-controller-manager:v1.26.13
    name: kube-controller-manager
    env:
    - name: AWS_REGION
      value: us-east-1
    - name: FROM_FIELD
      valueFrom:
        fieldRef:
          fieldPath: spec.nodeName
    volumeMounts:
    - mountPath: /etc/kubernetes/pki
      name: k8s-certs
      readOnly: true
    - mountPath: /etc/kubernetes/controller-manager.conf
      name: kubeconfig
      readOnly: true
    - mountPath: /usr/libexec/kubernetes/kubelet-plugins/volume/exec
      name: flexvolume-dir
    - mountPath: /var/run/kubernetes
      name: scratch
  hostNetwork: true
  priorityClassName: system-node-critical
  volumes:
  - hostPath:
      path: /etc/kubernetes/pki
      type: DirectoryOrCreate
    name: k8s-certs
  - hostPath:
      path: /etc/kubernetes/controller-manager.conf
      type: FileOrCreate
    name: kubeconfig
  - hostPath:
      path: /opt/flex
      type: DirectoryOrCreate
    name: flexvolume-dir
  - emptyDir: {}
    name: scratch
status: {}
`

const kopsKCM = `apiVersion: v1
kind: Pod
metadata:
  name: kube-controller-manager
  namespace: kube-system
spec:
  containers:
  - name: healthz-sidecar
    image: busybox
    command: ["/bin/sleep", "infinity"]
  - name: kube-controller-manager
    image: registry.k8s.io/kube-controller-manager:v1.26.13
    command: ["/go-runner"]
    args:
    - --log-file=/var/log/kube-controller-manager.log
    - --also-stdout
    - /usr/local/bin/kube-controller-manager
    - --kubeconfig=/var/lib/kube-controller-manager/kubeconfig
    - --cloud-provider=aws
    volumeMounts:
    - mountPath: /var/lib/kube-controller-manager
      name: varlibkcm
      readOnly: true
    - mountPath: /var/lib/kube-controller-manager/sub
      name: deeper
      subPath: x/y
  volumes:
  - name: varlibkcm
    hostPath:
      path: /var/lib/kube-controller-manager
  - name: deeper
    hostPath:
      path: /srv/deeper
`

func TestLoad(t *testing.T) {
	root := t.TempDir()
	r := &Runner{opts: Options{Root: root, NodeName: "Node-1", Binaries: map[string]string{"kube-controller-manager": "/bin/kcm"}, Env: []string{"AWS_EC2_METADATA_DISABLED=true"}}}
	j := func(p ...string) string { return filepath.Join(append([]string{root}, p...)...) }

	t.Run("kubeadm", func(t *testing.T) {
		m, err := r.load("kube-controller-manager.yaml", []byte(kubeadmKCM))
		if err != nil {
			t.Fatal(err)
		}
		if m.component != "kube-controller-manager" || m.container != "kube-controller-manager" || m.binary != "/bin/kcm" {
			t.Errorf("component %q container %q binary %q", m.component, m.container, m.binary)
		}
		want := []string{
			"--kubeconfig=" + j("etc/kubernetes/controller-manager.conf"),
			"--root-ca-file", j("etc/kubernetes/pki/ca.crt"),
			"--service-account-private-key-file=" + j("etc/kubernetes/pki/sa.key"),
			"--flex-volume-plugin-dir=" + j("opt/flex"), // hostPath, not mountPath
			"--cloud-config=/etc/kubernetes/cloud.conf", // under no mount
			"--cluster-signing-cert-file=" + j("etc/kubernetes/pki/ca.crt"),
			"--cert-dir=/var/run/kubernetes", // an emptyDir: not resolved
			"--controllers=*,bootstrapsigner,tokencleaner",
			"--bind-address=127.0.0.1",
		}
		if !slices.Equal(m.args, want) {
			t.Errorf("args\n got %q\nwant %q", m.args, want)
		}
		if wantEnv := []string{"AWS_REGION=us-east-1", "AWS_EC2_METADATA_DISABLED=true"}; !slices.Equal(m.env, wantEnv) {
			t.Errorf("env = %q, want %q", m.env, wantEnv)
		}
		p := m.pod
		if p.Name != "kube-controller-manager-node-1" || p.Namespace != "kube-system" || p.Spec.NodeName != "Node-1" {
			t.Errorf("pod %s/%s on %q", p.Namespace, p.Name, p.Spec.NodeName)
		}
		if p.Annotations[AnnotationConfigHash] != m.hash || p.Annotations[AnnotationConfigSource] != "file" || len(m.hash) != 32 {
			t.Errorf("annotations %v, hash %q", p.Annotations, m.hash)
		}
		if len(m.volumes) != 3 || m.volumes[0].name != "flexvolume-dir" || m.volumes[0].path != j("opt/flex") {
			t.Errorf("volumes %+v", m.volumes)
		}
		// The mirror Pod shows the manifest's command line, not the resolved one.
		if c := p.Spec.Containers[0].Command; c[1] != "--kubeconfig=/etc/kubernetes/controller-manager.conf" {
			t.Errorf("pod command changed: %q", c)
		}
	})

	t.Run("kops go-runner and subPath", func(t *testing.T) {
		m, err := r.load("kcm.manifest", []byte(kopsKCM))
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"--kubeconfig=" + j("var/lib/kube-controller-manager/kubeconfig"), "--cloud-provider=aws"}
		if m.container != "kube-controller-manager" || !slices.Equal(m.args, want) {
			t.Errorf("container %q args %q, want %q", m.container, m.args, want)
		}
		c := &m.pod.Spec.Containers[1]
		if got, ok := resolvePath("/var/lib/kube-controller-manager/sub/f", c, m.pod.Spec.Volumes, root); !ok || got != j("srv/deeper/x/y/f") {
			t.Errorf("longest mount with subPath: %q %v", got, ok)
		}
	})

	t.Run("same Pod, other bytes: same hash", func(t *testing.T) {
		a, err := r.load("a.yaml", []byte(kubeadmKCM))
		if err != nil {
			t.Fatal(err)
		}
		b, err := r.load("a.yaml", []byte("# a comment\n"+strings.ReplaceAll(kubeadmKCM, "status: {}\n", "")))
		if err != nil {
			t.Fatal(err)
		}
		c, err := r.load("a.yaml", []byte(strings.Replace(kubeadmKCM, "--bind-address=127.0.0.1", "--bind-address=0.0.0.0", 1)))
		if err != nil {
			t.Fatal(err)
		}
		if a.hash != b.hash || a.hash == c.hash {
			t.Errorf("hashes %s %s %s: want equal, equal, different", a.hash, b.hash, c.hash)
		}
	})

	t.Run("not run", func(t *testing.T) {
		m, err := r.load("etcd.yaml", []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: etcd}\nspec:\n  containers:\n  - name: etcd\n    image: etcd\n    command: [etcd, --data-dir=/var/lib/etcd]\n"))
		if err != nil {
			t.Fatal(err)
		}
		if m.component != "etcd" || m.binary != "" || m.pod.Namespace != "default" {
			t.Errorf("component %q binary %q namespace %q", m.component, m.binary, m.pod.Namespace)
		}
	})

	// Older kops manifests run the component from `sh -c`: the test bed
	// runs the script's component command as preflight and the migration
	// read it (nodefiles.ContainerCommand), without the redirections.
	t.Run("shell script", func(t *testing.T) {
		m, err := r.load("script.yaml", []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: s}\nspec:\n  containers:\n  - name: s\n    image: x\n    command: [sh, -c, 'mkfifo /tmp/p; exec /usr/local/bin/kube-controller-manager --v=2 > /var/log/kcm.log 2>&1']\n"))
		if err != nil {
			t.Fatal(err)
		}
		if m.component != "kube-controller-manager" || m.binary != "/bin/kcm" || !slices.Equal(m.args, []string{"--v=2"}) {
			t.Errorf("component %q binary %q args %q; want the script's kube-controller-manager with --v=2", m.component, m.binary, m.args)
		}
	})
}

func TestDecodePodErrors(t *testing.T) {
	for _, tc := range []struct {
		name, data, want string
	}{
		{"invalid-yaml", "apiVersion: v1\nkind: Pod\n  bad: [", "not valid YAML"},
		{"invalid-duplicate-key", "apiVersion: v1\napiVersion: v1\nkind: Pod\n", "not valid YAML"},
		{"invalid-unknown-field", "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  containers: [{name: c, image: i}]\n  nodeSelektor: {}\n", "unknown field"},
		{"invalid-kind", "apiVersion: v1\nkind: Deployment\nmetadata: {name: x}\n", "want v1 Pod"},
		{"invalid-no-name", "apiVersion: v1\nkind: Pod\nspec:\n  containers: [{name: c, image: i}]\n", "metadata.name"},
		{"invalid-no-containers", "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\n", "no containers"},
		{"invalid-empty", "", "want v1 Pod"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decodePod([]byte(tc.data))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestResolveArgs(t *testing.T) {
	c := &corev1.Container{VolumeMounts: []corev1.VolumeMount{
		{Name: "etc", MountPath: "/etc/kubernetes/"},
		{Name: "pki", MountPath: "/etc/kubernetes/pki"},
		{Name: "all", MountPath: "/"},
	}}
	vols := []corev1.Volume{
		{Name: "etc", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/host/etc"}}},
		{Name: "pki", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/host/pki"}}},
	}
	args := []string{"--a=/etc/kubernetes/x", "--b=/etc/kubernetes/pki/ca.crt", "--c", "/etc/kubernetes", "--d=relative/x",
		"--e=/etc/kubernetesX/y", "--f=/usr/bin", "-v=2", "--g=/etc/kubernetes/pki/../admin.conf", "--feature-gates=A=true"}
	got := resolveArgs(args, c, vols, "/R")
	want := []string{"--a=/R/host/etc/x", "--b=/R/host/pki/ca.crt", "--c", "/R/host/etc", "--d=relative/x",
		"--e=/etc/kubernetesX/y", "--f=/usr/bin", "-v=2", "--g=/R/host/etc/admin.conf", "--feature-gates=A=true"}
	if !slices.Equal(got, want) {
		t.Errorf("\n got %q\nwant %q", got, want)
	}
}

func TestHostPathPrepare(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		v       hostPathVolume
		wantErr bool
		check   func() bool
	}{
		{"DirectoryOrCreate creates", hostPathVolume{"v", filepath.Join(root, "a/b"), corev1.HostPathDirectoryOrCreate}, false,
			func() bool { return isDir(filepath.Join(root, "a/b")) }},
		{"FileOrCreate creates with parents", hostPathVolume{"v", filepath.Join(root, "c/d.conf"), corev1.HostPathFileOrCreate}, false,
			func() bool { return isFile(filepath.Join(root, "c/d.conf")) }},
		{"FileOrCreate on a folder", hostPathVolume{"v", filepath.Join(root, "a"), corev1.HostPathFileOrCreate}, true, nil},
		{"Directory missing", hostPathVolume{"v", filepath.Join(root, "nope"), corev1.HostPathDirectory}, true, nil},
		{"File present", hostPathVolume{"v", file, corev1.HostPathFile}, false, nil},
		{"File missing", hostPathVolume{"v", filepath.Join(root, "nope"), corev1.HostPathFile}, true, nil},
		{"Socket is a file", hostPathVolume{"v", file, corev1.HostPathSocket}, true, nil},
		{"no type, missing", hostPathVolume{"v", filepath.Join(root, "nope"), ""}, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.v.prepare()
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if tc.check != nil && !tc.check() {
				t.Error("not created")
			}
		})
	}
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// FuzzLoad: run it with -fuzzminimizetime 200x. With the default (up to
// 60 s per input), the worker spends its time minimizing each input that
// finds new coverage in this large binary, and the progress line stands
// still meanwhile (about 2,800 execs/s with the flag).
func FuzzLoad(f *testing.F) {
	f.Add([]byte(kubeadmKCM))
	f.Add([]byte(kopsKCM))
	f.Add([]byte("apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec: {containers: [{name: c, command: [kube-scheduler, /a/b]}]}\n"))
	r := &Runner{opts: Options{Root: "/R", NodeName: "n", Binaries: map[string]string{"kube-scheduler": "/bin/s"}}}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := r.load("f.yaml", data)
		if err != nil {
			return
		}
		if m.pod.Spec.NodeName != "n" || m.pod.Annotations[AnnotationConfigHash] != m.hash || !strings.HasSuffix(m.pod.Name, "-n") {
			t.Fatalf("defaults not applied: %+v", m.pod.ObjectMeta)
		}
		pod, err := decodePod(data)
		if err != nil {
			t.Fatalf("load accepted what decodePod refuses: %v", err)
		}
		_, _, rest := findComponent(pod, r.isKnown)
		if len(m.args) != len(rest) {
			t.Fatalf("args %q from %q", m.args, rest)
		}
		for i, a := range m.args {
			if a != rest[i] && !strings.Contains(a, "/R") {
				t.Fatalf("%q rewritten to %q, outside the root", rest[i], a)
			}
		}
	})
}

func TestPlanHostProcess(t *testing.T) {
	dir := corev1.HostPathDirectory
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		Containers: []corev1.Container{{
			Name:         "node",
			Command:      []string{"/usr/local/bin/awsccmctl", "migrate-from-intree", "node", "--root=/host", "--node-name=n1", "/host/etc/x"},
			Env:          []corev1.EnvVar{{Name: "A", Value: "1"}, {Name: "B", ValueFrom: &corev1.EnvVarSource{}}},
			VolumeMounts: []corev1.VolumeMount{{Name: "host", MountPath: "/host"}},
		}},
		Volumes: []corev1.Volume{{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/", Type: &dir}}}},
	}}
	known := func(b string) bool { return b == "awsccmctl" }
	hp, ok := PlanHostProcess(pod, 0, "/R", known)
	want := HostProcess{Component: "awsccmctl", Args: []string{"migrate-from-intree", "node", "--root=/R", "--node-name=n1", "/R/etc/x"}, Env: []string{"A=1"}}
	if !ok || !reflect.DeepEqual(hp, want) {
		t.Errorf("PlanHostProcess = %+v, %v; want %+v", hp, ok, want)
	}
	if _, ok := PlanHostProcess(pod, 0, "/R", func(string) bool { return false }); ok {
		t.Error("PlanHostProcess found a component where none is known")
	}
	root := t.TempDir()
	if err := PrepareHostPaths(pod, root); err != nil {
		t.Errorf("PrepareHostPaths(type Directory, the root exists): %v", err)
	}
	pod.Spec.Volumes[0].HostPath.Path = "/missing"
	if err := PrepareHostPaths(pod, root); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("PrepareHostPaths(type Directory, missing) = %v, want a does-not-exist error", err)
	}
}
