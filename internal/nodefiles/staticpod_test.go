package nodefiles

import (
	"reflect"
	"strings"
	"testing"
)

// pod renders a one-container static Pod.
func pod(name, labels, container string) string {
	return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\n  namespace: kube-system\n" + labels +
		"spec:\n  hostNetwork: true\n  containers:\n" + container
}

func TestParseStaticPod(t *testing.T) {
	cases := []struct {
		name      string
		manifest  string
		component string
		command   []string
		flags     [][2]string
		version   string
	}{
		{name: "kubeadm command", manifest: pod("kube-apiserver", "", "  - name: kube-apiserver\n    image: registry.k8s.io/kube-apiserver:v1.30.1\n    command: [kube-apiserver, --cloud-provider=external, --v=2]\n"),
			component: "kube-apiserver", command: []string{"kube-apiserver"}, flags: [][2]string{{"cloud-provider", "external"}, {"v", "2"}}, version: "v1.30.1"},
		{name: "command tail plus args", manifest: pod("kcm", "", "  - name: kcm\n    image: my.registry:5000/kube-controller-manager:v1.26.0\n    command: [/usr/local/bin/kube-controller-manager, --a=1]\n    args: [--b, '2']\n"),
			component: "kube-controller-manager", command: []string{"/usr/local/bin/kube-controller-manager"}, flags: [][2]string{{"a", "1"}, {"b", "2"}}, version: "v1.26.0"},
		{name: "go-runner wrapper", manifest: pod("kube-scheduler", "", "  - name: s\n    image: registry.k8s.io/kube-scheduler:v1.32.4@sha256:abc\n    command: [/go-runner]\n    args: [--log-file=/var/log/kube-scheduler.log, --also-stdout, /usr/local/bin/kube-scheduler, --leader-elect=true]\n"),
			component: "kube-scheduler", command: []string{"/usr/local/bin/kube-scheduler"}, flags: [][2]string{{"leader-elect", "true"}}, version: "v1.32.4"},
		{name: "sh -c with redirections", manifest: pod("kube-apiserver", "", `  - name: kube-apiserver
    image: k8s.gcr.io/kube-apiserver:v1.21.14
    command:
    - /bin/sh
    - -c
    - mkfifo /tmp/pipe; (tee -a /var/log/kube-apiserver.log < /tmp/pipe & ) ; exec /usr/local/bin/kube-apiserver --allow-privileged=true --cloud-provider=aws "--enable-admission-plugins=NodeRestriction,PersistentVolumeLabel" --advertise-address=$HOST_IP 1>>/tmp/pipe 2>&1
`), component: "kube-apiserver", command: []string{"/usr/local/bin/kube-apiserver"}, version: "v1.21.14",
			flags: [][2]string{{"allow-privileged", "true"}, {"cloud-provider", "aws"}, {"enable-admission-plugins", "NodeRestriction,PersistentVolumeLabel"}, {"advertise-address", "$HOST_IP"}}},
		{name: "bash -ec in args", manifest: pod("etcd", "", "  - name: etcd\n    image: registry.k8s.io/etcd:3.5.9-0\n    command: [bash]\n    args: [-ec, 'mkdir -p /var/lib/etcd && exec etcd --data-dir=/var/lib/etcd --name=\"$(hostname)\" > /var/log/etcd.log']\n"),
			component: "etcd", command: []string{"etcd"}, flags: [][2]string{{"data-dir", "/var/lib/etcd"}, {"name", `"$(hostname)"`}}, version: "3.5.9-0"},
		{name: "fallback on the component label", manifest: pod("apiserver-x", "  labels:\n    component: kube-apiserver\n", "  - name: sidecar\n    image: busybox\n  - name: kube-apiserver\n    image: registry.k8s.io/kube-apiserver:latest\n    args: [--secure-port=6443]\n"),
			component: "kube-apiserver", flags: [][2]string{{"secure-port", "6443"}}},
		{name: "fallback on the kops k8s-app label", manifest: pod("x", "  labels:\n    k8s-app: kube-controller-manager\n", "  - name: c\n    image: registry.k8s.io/kube-controller-manager@sha256:abc\n    args: [--leader-elect=false]\n"),
			component: "kube-controller-manager", flags: [][2]string{{"leader-elect", "false"}}},
		{name: "other static Pod", manifest: pod("kube-proxy", "", "  - name: kube-proxy\n    image: registry.k8s.io/kube-proxy:v1.30.0\n    command: [/go-runner, --also-stdout, /usr/local/bin/kube-proxy, --v=2]\n")},
		{name: "etcd data path is not the etcd binary", manifest: pod("etcd-manager", "", "  - name: m\n    image: x\n    command: [/bin/sh, -c, 'mkdir -p /var/lib/etcd; /etcd-manager --data-dir=/var/lib/etcd']\n")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sp, err := parseStaticPod([]byte(tc.manifest))
			if err != nil {
				t.Fatalf("parseStaticPod: %v", err)
			}
			if tc.component == "" {
				if sp != nil {
					t.Fatalf("parsed as %s with %s, want no component", sp.Component, sp.Flags)
				}
				return
			}
			if sp == nil || sp.Component != tc.component || sp.Version != tc.version || !reflect.DeepEqual(sp.Flags.Command, tc.command) || !reflect.DeepEqual(kv(sp.Flags), tc.flags) {
				t.Fatalf("got %+v (flags %q), want %s %s %q %q", sp, kvOrNil(sp), tc.component, tc.version, tc.command, tc.flags)
			}
		})
	}
}

func kvOrNil(sp *StaticPod) [][2]string {
	if sp == nil {
		return nil
	}
	return kv(sp.Flags)
}

func TestParseStaticPodInvalid(t *testing.T) {
	cases := map[string]struct{ manifest, err string }{
		"invalid-yaml":          {"apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: x\n   image: y\n", "not valid YAML"},
		"invalid-duplicate-key": {"apiVersion: v1\nkind: Pod\nkind: Pod\n", "not valid YAML"},
		"invalid-types":         {"apiVersion: v1\nkind: Pod\nspec:\n  containers: kube-apiserver\n", "not a Pod"},
		"invalid-kind":          {"apiVersion: apps/v1\nkind: Deployment\n", `kind "Deployment", want v1 Pod`},
		"invalid-empty":         {"", `apiVersion "" kind ""`},
		"invalid-no-containers": {"apiVersion: v1\nkind: Pod\nmetadata:\n  name: kube-apiserver\nspec: {}\n", "no containers"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := parseStaticPod([]byte(tc.manifest))
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("error = %v, want %q", err, tc.err)
			}
		})
	}
}

func TestImageVersion(t *testing.T) {
	for image, want := range map[string]string{
		"registry.k8s.io/kube-apiserver:v1.26.15":                     "v1.26.15",
		"registry.k8s.io/kube-apiserver:v1.32.4@sha256:0a3f":          "v1.32.4",
		"localhost:5000/kube-apiserver:v1.30.0-eks-1a2b3c":            "v1.30.0-eks-1a2b3c",
		"localhost:5000/kube-apiserver":                               "",
		"registry.k8s.io/kube-apiserver@sha256:0a3f":                  "",
		"registry.k8s.io/kube-apiserver:latest":                       "",
		"public.ecr.aws/eks-distro/kubernetes/kube-apiserver:v1.29.1": "v1.29.1",
	} {
		if got := ImageVersion(image); got != want {
			t.Errorf("ImageVersion(%q) = %q, want %q", image, got, want)
		}
	}
}
