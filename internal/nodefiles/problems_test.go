package nodefiles

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPathEscape proves that nothing outside the root is read: "..", relative
// links climbing out and absolute links all stay under the root, as in a
// chroot.
func TestPathEscape(t *testing.T) {
	outer := t.TempDir()
	secret := "KUBELET_EXTRA_ARGS=--leaked=true\nKUBELET_KUBEADM_ARGS=--leaked=true\n"
	if err := os.WriteFile(filepath.Join(outer, "secret.env"), []byte(secret), 0o644); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(outer, "node")
	rootFiles := map[string]string{
		"/lib/systemd/system/kubelet.service": "[Service]\nEnvironmentFile=-/../secret.env\nEnvironmentFile=-/../../../../../../" + strings.TrimPrefix(outer, "/") + "/secret.env\n" +
			"EnvironmentFile=-/etc/default/kubelet\nEnvironmentFile=-/var/lib/kubelet/kubeadm-flags.env\nExecStart=/usr/bin/kubelet $KUBELET_EXTRA_ARGS $KUBELET_KUBEADM_ARGS --config=/etc/kubelet-config.yaml\n",
		"/etc/default/kubelet":               "symlink:../../../secret.env",            // climbs out: stops at the root
		"/var/lib/kubelet/kubeadm-flags.env": "symlink:" + outer + "/secret.env",       // absolute: taken under the root
		"/etc/kubelet-config.yaml":           "symlink:/etc/../../../real-config.conf", // resolves to /real-config.conf under the root
		"/real-config.conf":                  "kind: KubeletConfiguration\nproviderID: aws:///us-east-1a/i-0123456789abcdef0\n",
		"/etc/kubernetes/manifests":          "symlink:/../..",
	}
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	for p, c := range rootFiles {
		host := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(host), 0o755); err != nil {
			t.Fatal(err)
		}
		if target, ok := strings.CutPrefix(c, "symlink:"); ok {
			if err := os.Symlink(target, host); err != nil {
				t.Fatal(err)
			}
		} else if err := os.WriteFile(host, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	n := mustRead(t, root)
	k := n.Kubelet
	if k.Flags.Has("leaked") {
		t.Fatalf("a file outside the root was read: %s", k.Flags)
	}
	if k.Config == nil || k.Config.ProviderID != "aws:///us-east-1a/i-0123456789abcdef0" {
		t.Errorf("absolute link inside the root not followed: %+v, problems %q", k.Config, n.Problems)
	}
	// The manifests link points at the root itself: nothing there is a manifest.
	if len(n.StaticPods) != 0 {
		t.Errorf("static Pods read through an escaping link: %v", n.StaticPods)
	}
	problemsContain(t, n)
}

func TestResolveLoop(t *testing.T) {
	root := writeTree(t, map[string]string{"/a": "symlink:/b", "/b": "symlink:a"})
	if _, err := (fsRoot{dir: root}).readFile("/a"); err == nil || !strings.Contains(err.Error(), "too many levels") {
		t.Fatalf("link loop: %v", err)
	}
}

func TestProblems(t *testing.T) {
	good := pod("kube-apiserver", "", "  - name: a\n    image: registry.k8s.io/kube-apiserver:v1.30.0\n    command: [kube-apiserver]\n")
	cases := []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{name: "invalid-duplicate-component", files: map[string]string{
			"/etc/kubernetes/manifests/kube-apiserver.yaml":     good,
			"/etc/kubernetes/manifests/kube-apiserver-old.yaml": good,
			"/etc/kubernetes/manifests/kube-apiserver.yaml.bak": "not read: wrong suffix",
			"/etc/kubernetes/manifests/.hidden.yaml":            "not read: hidden",
		}, want: []string{"/etc/kubernetes/manifests/kube-apiserver.yaml: a second static Pod for kube-apiserver (the first is /etc/kubernetes/manifests/kube-apiserver-old.yaml)"}},
		{name: "invalid-required-env-file-missing", files: map[string]string{
			"/etc/systemd/system/kubelet.service": "[Service]\nEnvironmentFile=/etc/sysconfig/kubelet\nExecStart=/usr/local/bin/kubelet $DAEMON_ARGS\n",
		}, want: []string{"/etc/sysconfig/kubelet: named by EnvironmentFile= but missing"}},
		{name: "invalid-config-missing", files: map[string]string{
			"/etc/default/kubelet": "KUBELET_EXTRA_ARGS=--config=/var/lib/kubelet/kubelet.conf",
		}, want: []string{"/var/lib/kubelet/kubelet.conf: named by the kubelet's --config but missing"}},
		{name: "invalid-config-kind", files: map[string]string{
			"/var/lib/kubelet/config.yaml": "apiVersion: v1\nkind: ConfigMap\n",
		}, want: []string{`/var/lib/kubelet/config.yaml: kind "ConfigMap", want KubeletConfiguration`}},
		{name: "invalid-config-yaml", files: map[string]string{
			"/var/lib/kubelet/config.yaml": "kind: KubeletConfiguration\nproviderID: [unclosed\n",
		}, want: []string{"/var/lib/kubelet/config.yaml: not valid YAML"}},
		{name: "invalid-env-file", files: map[string]string{
			"/var/lib/kubelet/kubeadm-flags.env": "KUBELET_KUBEADM_ARGS=\"--cloud-provider=external\n",
		}, want: []string{"/var/lib/kubelet/kubeadm-flags.env: line 1: KUBELET_KUBEADM_ARGS has an unterminated \" quote"}},
		{name: "invalid-unit", files: map[string]string{
			"/lib/systemd/system/kubelet.service":                   kubeletUnit,
			"/etc/systemd/system/kubelet.service.d/10-kubeadm.conf": "[Service]\nEnvironment=\"A=1\nEnvironment=NOT-A-NAME=1\nExecStart=\nExecStart=/usr/bin/kubelet \"--a\n",
		}, want: []string{
			"10-kubeadm.conf: line 2: Environment=: unterminated \" quote",
			`10-kubeadm.conf: line 3: Environment=: "NOT-A-NAME=1" is not NAME=VALUE`,
			"10-kubeadm.conf: line 5: ExecStart=: unterminated \" quote"}},
		{name: "invalid-masked-unit", files: map[string]string{
			"/etc/systemd/system/kubelet.service": "symlink:/dev/null",
			"/lib/systemd/system/kubelet.service": kubeletUnit,
		}, want: []string{"/etc/systemd/system/kubelet.service: kubelet.service is masked"}},
		{name: "invalid-large-file", files: map[string]string{
			"/etc/default/kubelet": "KUBELET_EXTRA_ARGS=" + strings.Repeat("x", maxFileSize),
		}, want: []string{"/etc/default/kubelet: larger than 1048576 bytes"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			problemsContain(t, mustRead(t, writeTree(t, tc.files)), tc.want...)
		})
	}
}
