package nodechecks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/awsccmctl/awsccmctl/internal/nodefiles"
	"github.com/awsccmctl/awsccmctl/internal/preflight"
)

// cpNode is a control-plane node with the given images and flags.
func cpNode(apiImage string, apiFlags []string, kcmFlags []string) *nodefiles.Node {
	n := &nodefiles.Node{Root: "/", Files: []string{"x"}, StaticPods: map[string]*nodefiles.StaticPod{}}
	if apiFlags != nil {
		n.StaticPods[apiServer] = &nodefiles.StaticPod{Path: "/etc/kubernetes/manifests/kube-apiserver.yaml", Component: apiServer,
			Image: apiImage, Version: nodefiles.ImageVersion(apiImage), Flags: nodefiles.ParseFlags(append([]string{apiServer}, apiFlags...))}
	}
	if kcmFlags != nil {
		n.StaticPods[kcm] = &nodefiles.StaticPod{Path: "/etc/kubernetes/manifests/kube-controller-manager.manifest", Component: kcm,
			Flags: nodefiles.ParseFlags(append([]string{kcm}, kcmFlags...))}
	}
	return n
}

// kubeletNode reads a node whose files are given (node path -> content).
func kubeletNode(t *testing.T, files map[string]string) *nodefiles.Node {
	t.Helper()
	root := t.TempDir()
	for p, c := range files {
		host := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(host), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(host, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	n, err := nodefiles.Read(root)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestRules(t *testing.T) {
	const v133, v130, v131, v127, v137 = "registry.k8s.io/kube-apiserver:v1.33.0", "registry.k8s.io/kube-apiserver:v1.30.2",
		"registry.k8s.io/kube-apiserver:v1.31.0", "registry.k8s.io/kube-apiserver:v1.27.0", "registry.k8s.io/kube-apiserver:v1.37.2"
	sysconfigUnit := "[Service]\nEnvironmentFile=/etc/sysconfig/kubelet\nExecStart=/usr/local/bin/kubelet \"$DAEMON_ARGS\"\n"
	cases := []struct {
		name    string
		node    func(t *testing.T) *nodefiles.Node
		mode    preflight.Mode
		kubelet string
		id      string
		status  preflight.Status
		text    string // in the message or remediation
	}{
		{name: "apiserver 1.33 rejects even external", id: IDAPIServerCloudProvider, status: fail, text: "unknown flag",
			node: func(*testing.T) *nodefiles.Node { return cpNode(v133, []string{"--cloud-provider=external"}, nil) }},
		{name: "apiserver aws after 1.27 fails in pre-migrate", mode: migrate, id: IDAPIServerCloudProvider, status: fail, text: "removed in 1.27",
			node: func(*testing.T) *nodefiles.Node { return cpNode(v130, []string{"--cloud-provider=aws"}, nil) }},
		{name: "apiserver other provider", id: IDAPIServerCloudProvider, status: fail, text: "not an AWS setting",
			node: func(*testing.T) *nodefiles.Node { return cpNode(v130, []string{"--cloud-provider=gce"}, nil) }},
		{name: "apiserver empty provider", id: IDAPIServerCloudProvider, status: pass,
			node: func(*testing.T) *nodefiles.Node { return cpNode(v130, []string{"--cloud-provider="}, nil) }},
		{name: "apiserver unknown version, aws in pre-migrate", mode: migrate, id: IDAPIServerCloudProvider, status: pass, text: "migrate-from-intree will remove it",
			node: func(*testing.T) *nodefiles.Node {
				return cpNode("registry.k8s.io/kube-apiserver:latest", []string{"--cloud-provider=aws"}, nil)
			}},
		{name: "unknown version warns", id: IDVersionsControlPlane, status: warn, text: "no version tag",
			node: func(*testing.T) *nodefiles.Node {
				return cpNode("registry.k8s.io/kube-apiserver@sha256:00", []string{}, nil)
			}},
		{name: "cloud-config after 1.33", mode: migrate, id: IDAPIServerCloudConfig, status: fail, text: "unknown flag",
			node: func(*testing.T) *nodefiles.Node { return cpNode(v133, []string{"--cloud-config=/etc/cc"}, nil) }},
		{name: "cloud-config in pre-migrate after 1.27", mode: migrate, id: IDAPIServerCloudConfig, status: fail, text: "belongs to the CCM",
			node: func(*testing.T) *nodefiles.Node { return cpNode(v127, []string{"--cloud-config=/etc/cc"}, nil) }},
		{name: "PVL on 1.31 is fatal in any mode", mode: migrate, id: IDAPIServerAdmission, status: fail, text: "will not start",
			node: func(*testing.T) *nodefiles.Node {
				return cpNode(v131, []string{"--enable-admission-plugins=NodeRestriction", "--enable-admission-plugins= PersistentVolumeLabel"}, nil)
			}},
		{name: "PVL on 1.30 post-install", mode: post, id: IDAPIServerAdmission, status: fail, text: "cloud-pv-admission-labeler",
			node: func(*testing.T) *nodefiles.Node {
				return cpNode(v130, []string{"--enable-admission-plugins=PersistentVolumeLabel"}, nil)
			}},
		{name: "kcm leader election off", id: IDKCMLeaderElect, status: fail, text: "spec.kubeControllerManager.leaderElection.leaderElect: true",
			node: func(*testing.T) *nodefiles.Node { return cpNode(v130, []string{}, []string{"--leader-elect=false"}) }},
		{name: "kcm leader election garbage", id: IDKCMLeaderElect, status: fail, text: "not a boolean",
			node: func(*testing.T) *nodefiles.Node { return cpNode(v130, []string{}, []string{"--leader-elect=maybe"}) }},
		{name: "kcm leader election default", id: IDKCMLeaderElect, status: pass, text: "default is true",
			node: func(*testing.T) *nodefiles.Node { return cpNode(v130, []string{}, []string{}) }},
		{name: "kcm aws after 1.27 in pre-migrate", mode: migrate, id: IDKCMCloudProvider, status: fail, text: "cannot start",
			node: func(*testing.T) *nodefiles.Node { return cpNode(v127, []string{}, []string{"--cloud-provider=aws"}) }},
		{name: "kcm without provider in pre-migrate", mode: migrate, id: IDKCMCloudProvider, status: warn, text: "already migrated",
			node: func(*testing.T) *nodefiles.Node { return cpNode(v130, []string{}, []string{}) }},
		{name: "kcm other provider", id: IDKCMCloudProvider, status: fail, text: "kops edit cluster",
			node: func(*testing.T) *nodefiles.Node { return cpNode(v130, []string{}, []string{"--cloud-provider=gce"}) }},
		{name: "cloud routes with a foreign provider", id: IDKCMCloudRoutes, status: skip,
			node: func(*testing.T) *nodefiles.Node {
				return cpNode(v130, []string{}, []string{"--cloud-provider=gce", "--allocate-node-cidrs"})
			}},
		{name: "cloud routes in-tree", mode: migrate, id: IDKCMCloudRoutes, status: warn, text: "--configure-cloud-routes=true --cluster-cidr=10.0.0.0/16",
			node: func(*testing.T) *nodefiles.Node {
				return cpNode(v130, []string{}, []string{"--cloud-provider=aws", "--allocate-node-cidrs", "--configure-cloud-routes", "--cluster-cidr=10.0.0.0/16"})
			}},
		{name: "kubelet without cloud-provider, kops file", id: IDKubeletCloudProvider, status: fail, text: "add --cloud-provider=external in DAEMON_ARGS in /etc/sysconfig/kubelet, then `systemctl restart kubelet`; kops regenerates",
			node: func(t *testing.T) *nodefiles.Node {
				return kubeletNode(t, map[string]string{"/lib/systemd/system/kubelet.service": sysconfigUnit, "/etc/sysconfig/kubelet": `DAEMON_ARGS="--v=2"`})
			}},
		{name: "kubelet flags on ExecStart only", id: IDKubeletCloudProvider, status: fail, text: "in the ExecStart= line of /etc/systemd/system/kubelet.service, then `systemctl daemon-reload",
			node: func(t *testing.T) *nodefiles.Node {
				return kubeletNode(t, map[string]string{"/etc/systemd/system/kubelet.service": "[Service]\nExecStart=/usr/bin/kubelet --cloud-provider=gce\n"})
			}},
		{name: "kubelet aws on a worker before migration", mode: migrate, id: IDKubeletCloudProvider, status: pass, text: "switches it to external",
			node: func(t *testing.T) *nodefiles.Node {
				return kubeletNode(t, map[string]string{"/etc/default/kubelet": "KUBELET_EXTRA_ARGS=--cloud-provider=aws"})
			}},
		{name: "kubelet aws with a 1.30 control plane before migration", mode: migrate, id: IDKubeletCloudProvider, status: fail, text: "change --cloud-provider=aws to --cloud-provider=external in KUBELET_EXTRA_ARGS in /etc/default/kubelet",
			node: func(t *testing.T) *nodefiles.Node {
				n := kubeletNode(t, map[string]string{"/etc/default/kubelet": "KUBELET_EXTRA_ARGS=--cloud-provider=aws"})
				n.StaticPods = cpNode(v130, []string{}, nil).StaticPods
				return n
			}},
		{name: "providerID without zone, which the CCM accepts", id: IDKubeletNodeIdentity, status: pass, text: "providerID aws:////i-0123456789abcdef0",
			node: func(t *testing.T) *nodefiles.Node {
				return kubeletNode(t, map[string]string{"/etc/default/kubelet": "KUBELET_EXTRA_ARGS=--provider-id=aws:////i-0123456789abcdef0"})
			}},
		{name: "providerID of another cloud in the config", id: IDKubeletNodeIdentity, status: warn, text: `scheme "gce"`,
			node: func(t *testing.T) *nodefiles.Node {
				return kubeletNode(t, map[string]string{"/var/lib/kubelet/config.yaml": "kind: KubeletConfiguration\nproviderID: gce://p/z/n\n"})
			}},
		{name: "hostname-override not an EC2 name", id: IDKubeletNodeIdentity, status: warn, text: "neither",
			node: func(t *testing.T) *nodefiles.Node {
				return kubeletNode(t, map[string]string{"/etc/default/kubelet": "KUBELET_EXTRA_ARGS=--hostname-override=worker-1"})
			}},
		{name: "hostname-override private DNS", id: IDKubeletNodeIdentity, status: pass,
			node: func(t *testing.T) *nodefiles.Node {
				return kubeletNode(t, map[string]string{"/etc/default/kubelet": "KUBELET_EXTRA_ARGS=--hostname-override=ip-10-0-1-5.ec2.internal"})
			}},
		{name: "skew: kubelet newer", kubelet: "v1.38.0", id: IDKubeletSkew, status: warn, text: "newer",
			node: func(t *testing.T) *nodefiles.Node { return withKubelet(t, cpNode(v137, []string{}, nil)) }},
		{name: "skew: four minors older", kubelet: "Kubernetes v1.33.9", id: IDKubeletSkew, status: warn, text: "more than 3",
			node: func(t *testing.T) *nodefiles.Node { return withKubelet(t, cpNode(v137, []string{}, nil)) }},
		{name: "skew: three minors older", kubelet: "v1.34.1", id: IDKubeletSkew, status: pass,
			node: func(t *testing.T) *nodefiles.Node { return withKubelet(t, cpNode(v137, []string{}, nil)) }},
		{name: "skew: garbage version", kubelet: "unknown", id: IDKubeletSkew, status: warn, text: "cannot parse",
			node: func(t *testing.T) *nodefiles.Node { return withKubelet(t, cpNode(v137, []string{}, nil)) }},
		{name: "skew: worker", kubelet: "v1.34.1", id: IDKubeletSkew, status: skip, text: "cluster mode",
			node: func(t *testing.T) *nodefiles.Node {
				return kubeletNode(t, map[string]string{"/etc/default/kubelet": "KUBELET_EXTRA_ARGS="})
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mode := tc.mode
			if mode == "" {
				mode = pre
			}
			f := run(t, Input{Node: tc.node(t), Mode: mode, KubeletVersion: tc.kubelet})[tc.id]
			if f.Status != tc.status || !strings.Contains(f.Message+" | "+f.Remediation, tc.text) {
				t.Fatalf("%s = %s: %s | %s\nwant %s with %q", tc.id, f.Status, f.Message, f.Remediation, tc.status, tc.text)
			}
		})
	}
}

// withKubelet adds a kubelet to a synthesized control-plane node.
func withKubelet(t *testing.T, n *nodefiles.Node) *nodefiles.Node {
	k := kubeletNode(t, map[string]string{"/etc/default/kubelet": "KUBELET_EXTRA_ARGS=--cloud-provider=external"})
	n.Kubelet = k.Kubelet
	return n
}
