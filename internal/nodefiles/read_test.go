package nodefiles

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestReadFixtures(t *testing.T) {
	cases := []struct {
		fixture    string
		pods       []string
		apiVersion string
		kubelet    Origin // FlagFile
		unit       string
		cloud      string // kubelet --cloud-provider
		providerID string // from the config file
		problems   int
	}{
		{fixture: "kubeadm-1.26-intree", pods: []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"}, apiVersion: "v1.26.15",
			kubelet: Origin{"/var/lib/kubelet/kubeadm-flags.env", "KUBELET_KUBEADM_ARGS"}, unit: "/etc/systemd/system/kubelet.service.d/10-kubeadm.conf", cloud: "aws"},
		{fixture: "kubeadm-external", pods: []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"}, apiVersion: "v1.37.2",
			kubelet: Origin{"/var/lib/kubelet/kubeadm-flags.env", "KUBELET_KUBEADM_ARGS"}, unit: "/usr/lib/systemd/system/kubelet.service.d/10-kubeadm.conf", cloud: "external"},
		{fixture: "kops-node", kubelet: Origin{"/etc/sysconfig/kubelet", "DAEMON_ARGS"}, unit: "/lib/systemd/system/kubelet.service", cloud: "external"},
		{fixture: "kops-control-plane", pods: []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler"}, apiVersion: "v1.32.4",
			kubelet: Origin{"/etc/sysconfig/kubelet", "DAEMON_ARGS"}, unit: "/lib/systemd/system/kubelet.service", cloud: "external", providerID: "aws:///eu-west-1a/i-0f1e2d3c4b5a69788"},
		{fixture: "broken", pods: []string{"kube-controller-manager"},
			kubelet: Origin{"/var/lib/kubelet/kubeadm-flags.env", "KUBELET_KUBEADM_ARGS"}, unit: "/etc/systemd/system/kubelet.service.d/10-kubeadm.conf", cloud: "external", problems: 1},
	}
	for _, tc := range cases {
		t.Run(tc.fixture, func(t *testing.T) {
			n := mustRead(t, filepath.Join("testdata", tc.fixture))
			var pods []string
			for c := range n.StaticPods {
				pods = append(pods, c)
			}
			slices.Sort(pods)
			if !reflect.DeepEqual(pods, tc.pods) {
				t.Errorf("static Pods = %q, want %q", pods, tc.pods)
			}
			if api := n.StaticPods["kube-apiserver"]; api != nil && api.Version != tc.apiVersion {
				t.Errorf("apiserver version = %q, want %q", api.Version, tc.apiVersion)
			}
			if len(n.Problems) != tc.problems {
				t.Errorf("problems = %q, want %d", n.Problems, tc.problems)
			}
			k := n.Kubelet
			if k == nil {
				t.Fatal("no kubelet found")
			}
			if k.FlagFile() != tc.kubelet || k.Unit != tc.unit {
				t.Errorf("FlagFile = %v, Unit = %q; want %v, %q", k.FlagFile(), k.Unit, tc.kubelet, tc.unit)
			}
			if got := flagOf(t, k.Flags, "cloud-provider"); got != tc.cloud {
				t.Errorf("kubelet --cloud-provider = %q, want %q", got, tc.cloud)
			}
			if o, _ := k.Origin("cloud-provider"); o != tc.kubelet {
				t.Errorf("Origin(cloud-provider) = %v, want %v", o, tc.kubelet)
			}
			if k.Config == nil || k.Config.Kind != "KubeletConfiguration" || k.Config.ProviderID != tc.providerID {
				t.Errorf("config = %+v, want providerID %q", k.Config, tc.providerID)
			}
		})
	}
}

func TestReadKopsGoRunner(t *testing.T) {
	n := mustRead(t, "testdata/kops-control-plane")
	api := n.StaticPods["kube-apiserver"]
	if api.Path != "/etc/kubernetes/manifests/kube-apiserver.manifest" || api.Image != "registry.k8s.io/kube-apiserver:v1.32.4@sha256:0a3fe4fa6c4ed5b6e6e3fa5e0c1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c" {
		t.Errorf("apiserver = %s %s", api.Path, api.Image)
	}
	if !reflect.DeepEqual(api.Flags.Command, []string{"/usr/local/bin/kube-apiserver"}) || api.Flags.Has("log-file") || api.Flags.Has("also-stdout") {
		t.Errorf("go-runner's own flags leaked into the apiserver's: %s", api.Flags)
	}
	if got := flagOf(t, api.Flags, "cloud-provider"); got != "external" {
		t.Errorf("--cloud-provider = %q", got)
	}
	if _, ok := n.StaticPods["etcd"]; ok {
		t.Error("etcd-manager (whose flags mention /var/lib/etcd paths) was taken for etcd")
	}
}

func TestReadKubeletFromKopsSysconfig(t *testing.T) {
	k := mustRead(t, "testdata/kops-node").Kubelet
	// The quoted "$DAEMON_ARGS" must give one argument per flag, as systemd does.
	if got := len(k.Flags.All()); got != 23 {
		t.Errorf("kubelet has %d flags, want 23: %s", got, k.Flags)
	}
	if got := flagOf(t, k.Flags, "hostname-override"); got != "i-0a1b2c3d4e5f60718" {
		t.Errorf("--hostname-override = %q", got)
	}
	if got := flagOf(t, k.Flags, "eviction-hard"); !strings.HasPrefix(got, "memory.available<100Mi,") {
		t.Errorf("--eviction-hard = %q", got)
	}
	if k.ConfigPath != "/var/lib/kubelet/kubelet.conf" {
		t.Errorf("ConfigPath = %q", k.ConfigPath)
	}
	want := []string{"/lib/systemd/system/kubelet.service", "/etc/sysconfig/kubelet", "/var/lib/kubelet/kubelet.conf"}
	if !reflect.DeepEqual(k.Sources, want) {
		t.Errorf("Sources = %q, want %q", k.Sources, want)
	}
}

func TestDropInOrder(t *testing.T) {
	base := map[string]string{
		"/lib/systemd/system/kubelet.service":                         kubeletUnit,
		"/lib/systemd/system/kubelet.service.d/10-kubeadm.conf":       "[Service]\nExecStart=\nExecStart=/usr/bin/kubelet --masked=true\n",
		"/etc/systemd/system/kubelet.service.d/10-kubeadm.conf":       kubeadmDropIn,
		"/var/lib/kubelet/kubeadm-flags.env":                          `KUBELET_KUBEADM_ARGS="--cloud-provider=external"`,
		"/etc/systemd/system/kubelet.service.d/05-env.conf":           "[Service]\nEnvironment=KUBELET_EXTRA_ARGS=--from-environment=true\n",
		"/usr/lib/systemd/system/kubelet.service.d/30-later-env.conf": "[Service]\nEnvironment=KUBELET_KUBEADM_ARGS=--loses-to-the-file=true\n",
		"/var/lib/kubelet/config.yaml":                                "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n",
		"/usr/lib/systemd/system/kubelet.service.d/README":            "not a drop-in",
	}
	t.Run("a later drop-in's ExecStart replaces", func(t *testing.T) {
		files := maps(base, map[string]string{
			"/etc/systemd/system/kubelet.service.d/20-override.conf": "[Service]\nExecStart=\nExecStart=/usr/local/bin/kubelet $KUBELET_KUBEADM_ARGS --override=true\n",
		})
		n := mustRead(t, writeTree(t, files))
		problemsContain(t, n)
		k := n.Kubelet
		want := "/usr/local/bin/kubelet --cloud-provider=external --override=true"
		if k.Flags.String() != want || k.Unit != "/etc/systemd/system/kubelet.service.d/20-override.conf" {
			t.Errorf("kubelet = %q from %s, want %q", k.Flags, k.Unit, want)
		}
	})
	t.Run("same-named drop-in in /etc masks /lib, env files beat Environment=", func(t *testing.T) {
		n := mustRead(t, writeTree(t, base))
		problemsContain(t, n)
		k := n.Kubelet
		want := "/usr/bin/kubelet --kubeconfig=/etc/kubernetes/kubelet.conf --config=/var/lib/kubelet/config.yaml --cloud-provider=external --from-environment=true"
		if k.Flags.String() != want {
			t.Errorf("kubelet = %q\nwant      %q", k.Flags, want)
		}
		wantSources := []string{"/lib/systemd/system/kubelet.service", "/etc/systemd/system/kubelet.service.d/05-env.conf",
			"/etc/systemd/system/kubelet.service.d/10-kubeadm.conf", "/usr/lib/systemd/system/kubelet.service.d/30-later-env.conf", "/var/lib/kubelet/kubeadm-flags.env", "/var/lib/kubelet/config.yaml"}
		if !reflect.DeepEqual(k.Sources, wantSources) {
			t.Errorf("Sources = %q\nwant %q", k.Sources, wantSources)
		}
		if o, _ := k.Origin("from-environment"); o != (Origin{"/etc/systemd/system/kubelet.service.d/05-env.conf", "KUBELET_EXTRA_ARGS"}) {
			t.Errorf("Origin = %v", o)
		}
	})
	t.Run("two ExecStart= without a reset is refused by systemd", func(t *testing.T) {
		files := maps(base, map[string]string{
			"/etc/systemd/system/kubelet.service.d/20-override.conf": "[Service]\nExecStart=/usr/local/bin/kubelet --override=true\n",
		})
		n := mustRead(t, writeTree(t, files))
		problemsContain(t, n, "/etc/systemd/system/kubelet.service.d/20-override.conf: line 2: a second ExecStart= without an empty ExecStart=")
		if !n.Kubelet.Flags.Has("override") {
			t.Errorf("the last ExecStart= is not the one read: %s", n.Kubelet.Flags)
		}
	})
}

func maps(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

func TestKubeletFromEnvFilesOnly(t *testing.T) {
	n := mustRead(t, writeTree(t, map[string]string{
		"/var/lib/kubelet/kubeadm-flags.env": `KUBELET_KUBEADM_ARGS="--cloud-provider=external --node-ip=10.0.0.5"`,
		"/etc/default/kubelet":               "KUBELET_EXTRA_ARGS='--node-labels=team=a --node-ip=10.0.0.6'\nOTHER=--ignored\n",
	}))
	problemsContain(t, n)
	k := n.Kubelet
	if k.Unit != "" || k.Flags.String() != "kubelet --cloud-provider=external --node-ip=10.0.0.5 --node-labels=team=a --node-ip=10.0.0.6" {
		t.Errorf("kubelet = %q (unit %q)", k.Flags, k.Unit)
	}
	if got := flagOf(t, k.Flags, "node-ip"); got != "10.0.0.6" {
		t.Errorf("later source does not win: --node-ip=%s", got)
	}
	if k.FlagFile() != (Origin{"/var/lib/kubelet/kubeadm-flags.env", "KUBELET_KUBEADM_ARGS"}) {
		t.Errorf("FlagFile = %v", k.FlagFile())
	}
}

func TestReadEmptyRootAndErrors(t *testing.T) {
	n := mustRead(t, t.TempDir())
	if n.Kubelet != nil || len(n.StaticPods) != 0 || len(n.Files) != 0 || len(n.Problems) != 0 {
		t.Errorf("empty root read as %+v", n)
	}
	if _, err := Read(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("a missing root is not an error")
	}
	f := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(f); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("a file root: %v", err)
	}
}
