package clusterchecks

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/awsccmctl/awsccmctl/internal/preflight"
	"github.com/awsccmctl/awsccmctl/internal/testbed"
)

const (
	cp0, cp1 = "ip-10-0-0-10.ec2.internal", "ip-10-0-0-11.ec2.internal"
	w1, w2   = "ip-10-0-1-11.ec2.internal", "ip-10-0-1-12.ec2.internal"
	v126     = "v1.26.15"
	v137     = "v1.37.1" // the test bed's kube-apiserver
	awsCCM   = "registry.k8s.io/provider-aws/cloud-controller-manager:v1.37.0"
)

var (
	inTreeAPI = []string{"--advertise-address=10.0.0.10", "--cloud-provider=aws", "--cloud-config=/etc/kubernetes/cloud.conf", "--enable-admission-plugins=NodeRestriction,PersistentVolumeLabel"}
	inTreeKCM = []string{"--cloud-provider=aws", "--cloud-config=/etc/kubernetes/cloud.conf", "--leader-elect=true", "--allocate-node-cidrs=true", "--cluster-cidr=192.168.0.0/16", "--configure-cloud-routes=false"}
	extAPI    = []string{"--advertise-address=10.0.0.10", "--enable-admission-plugins=NodeRestriction"}
	extKCM    = []string{"--cloud-provider=external", "--leader-elect=true", "--allocate-node-cidrs=false"}
)

const kubeadmInTreeV1beta3 = `apiVersion: kubeadm.k8s.io/v1beta3
kind: ClusterConfiguration
kubernetesVersion: v1.26.15
apiServer:
  extraArgs:
    cloud-provider: aws
    cloud-config: /etc/kubernetes/cloud.conf
    enable-admission-plugins: NodeRestriction,PersistentVolumeLabel
controllerManager:
  extraArgs:
    cloud-provider: aws
    cloud-config: /etc/kubernetes/cloud.conf
    configure-cloud-routes: "false"
`

const kubeadmExternalV1beta4 = `apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
kubernetesVersion: v1.37.1
controllerManager:
  extraArgs:
  - name: cloud-provider
    value: external
  - name: allocate-node-cidrs
    value: "false"
`

// kubeadm in-tree 1.26: three Nodes, the in-tree flags everywhere,
// kubeadm-config in agreement, a long-expired CCM Lease.
func seedKubeadmInTree(s *seed) {
	s.nodes(v126, cp0, w1, w2)
	s.controlPlanePods(cp0, v126, inTreeAPI, inTreeKCM)
	s.kubeadmConfig(kubeadmInTreeV1beta3)
	s.lease(ccmLease, "old-ccm_1", time.Hour)
}

// kubeadm external 1.37 with the AWS CCM running and holding its Lease.
func seedKubeadmExternal(s *seed) {
	s.nodes(v137, cp0, w1, w2)
	s.controlPlanePods(cp0, v137, extAPI, extKCM)
	s.kubeadmConfig(kubeadmExternalV1beta4)
	s.pod(workload(kubeSystem, "aws-cloud-controller-manager-x7k2p", cp0, awsCCM))
	s.lease(ccmLease, cp0+"_6d5f0c2e", 2*time.Second)
}

func TestScenarios(t *testing.T) {
	cp := testbed.Get(t)
	real := quietClient(cp.Config)
	fail, warn, skip := preflight.StatusFail, preflight.StatusWarn, preflight.StatusSkip
	cpSkipped := map[string]preflight.Status{IDAPIServerCloudProvider: skip, IDAPIServerCloudConfig: skip, IDAPIServerAdmission: skip,
		IDKCMCloudProvider: skip, IDKCMLeaderElect: skip, IDKCMCloudRoutes: skip, IDKubeadmDrift: skip}
	cases := []struct {
		name   string
		mode   preflight.Mode
		server string // "" = the real server's version
		seed   func(*seed)
		want   map[string]preflight.Status // every check not listed must pass
		text   map[string]string           // in the message or the remediation
	}{
		{name: "kubeadm in-tree 1.26, pre-install", mode: preflight.ModePreInstall, server: v126, seed: seedKubeadmInTree,
			want: map[string]preflight.Status{IDAPIServerCloudProvider: fail, IDAPIServerCloudConfig: fail, IDAPIServerAdmission: fail, IDKCMCloudProvider: fail},
			text: map[string]string{IDAPIServerCloudProvider: "remove --cloud-provider from " + cp0 + ":/etc/kubernetes/manifests/kube-apiserver.yaml AND from apiServer.extraArgs",
				IDClusterVersion: "in-tree AWS provider still present", IDConflictsCCMLease: "has expired"}},
		{name: "kubeadm in-tree 1.26, pre-migrate", mode: preflight.ModePreMigrate, server: v126, seed: seedKubeadmInTree,
			text: map[string]string{IDKCMCloudProvider: "in-tree provider active", IDKubeadmDrift: "v1beta3"}},
		{name: "kubeadm external 1.37, post-install", mode: preflight.ModePostInstall, seed: seedKubeadmExternal,
			text: map[string]string{IDConflictsCCMLease: "holder " + cp0 + "_6d5f0c2e", IDConflictsOtherCCMPods: "kube-system/aws-cloud-controller-manager-x7k2p",
				IDKubeadmDrift: "v1beta4", IDClusterVersion: "removed in 1.33"}},
		{name: "kubeadm external 1.37 with a CCM already running, pre-install", mode: preflight.ModePreInstall, seed: seedKubeadmExternal,
			want: map[string]preflight.Status{IDConflictsCCMLease: fail, IDConflictsOtherCCMPods: warn}},
		{name: "kubeadm external 1.37, pre-migrate: nothing to migrate", mode: preflight.ModePreMigrate, seed: seedKubeadmExternal,
			want: map[string]preflight.Status{IDClusterVersion: warn, IDKCMCloudProvider: warn, IDConflictsCCMLease: warn, IDConflictsOtherCCMPods: warn}},
		{name: "drift, v1beta3 map extraArgs", mode: preflight.ModePreMigrate, server: v126,
			seed: func(s *seed) {
				s.nodes(v126, cp0)
				s.controlPlanePods(cp0, v126, inTreeAPI, inTreeKCM)
				s.kubeadmConfig("apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\ncontrollerManager:\n  extraArgs:\n    cloud-provider: external\n")
			},
			want: map[string]preflight.Status{IDKubeadmDrift: warn},
			text: map[string]string{IDKubeadmDrift: "kube-controller-manager has --cloud-provider=aws but controllerManager.extraArgs in kubeadm-config gives --cloud-provider=external (on " + cp0 + ")"}},
		{name: "drift, v1beta4 list extraArgs, two control-plane nodes", mode: preflight.ModePreInstall,
			seed: func(s *seed) {
				s.nodes(v137, cp0, cp1, w1)
				s.controlPlanePods(cp0, v137, extAPI, extKCM)
				s.controlPlanePods(cp1, v137, extAPI, extKCM)
				s.kubeadmConfig(kubeadmExternalV1beta4 + "apiServer:\n  extraArgs:\n  - name: cloud-provider\n    value: external\n  - name: enable-admission-plugins\n    value: NodeRestriction,PersistentVolumeLabel\n")
			},
			want: map[string]preflight.Status{IDKubeadmDrift: warn},
			text: map[string]string{IDKubeadmDrift: "kube-apiserver has --enable-admission-plugins=NodeRestriction but apiServer.extraArgs in kubeadm-config gives --enable-admission-plugins=NodeRestriction,PersistentVolumeLabel (on " + cp0 + ", " + cp1 + ")",
				IDAPIServerCloudProvider: "(on " + cp0 + ", " + cp1 + ")"}},
		{name: "kops in-tree 1.26, pre-install", mode: preflight.ModePreInstall, server: v126,
			seed: func(s *seed) {
				s.nodes(v126, cp0, w1)
				s.pod(mirrorPod(apiServer+"-"+cp0, cp0, labelKops, apiServer, "registry.k8s.io/kube-apiserver:"+v126,
					[]string{"/go-runner", "--log-file=/var/log/kube-apiserver.log", "--also-stdout", "/usr/local/bin/kube-apiserver", "--allow-privileged=true", "--cloud-provider=aws", "--enable-admission-plugins=NodeRestriction"}))
				s.pod(mirrorPod(kcm+"-"+cp0, cp0, labelKops, kcm, "registry.k8s.io/kube-controller-manager:"+v126,
					[]string{"/bin/sh", "-c", "mkfifo /tmp/pipe; (tee -a /var/log/kube-controller-manager.log < /tmp/pipe & ) ; exec /usr/local/bin/kube-controller-manager --allocate-node-cidrs=true --cloud-provider=aws --cluster-cidr=100.96.0.0/11 --configure-cloud-routes=true --leader-elect=true > /tmp/pipe 2>&1"}))
			},
			want: map[string]preflight.Status{IDAPIServerCloudProvider: fail, IDKCMCloudProvider: fail, IDKCMCloudRoutes: warn, IDKubeadmDrift: skip},
			text: map[string]string{IDAPIServerCloudProvider: "remove spec.kubeAPIServer.cloudProvider with `kops edit cluster`", IDKCMCloudRoutes: "--cluster-cidr=100.96.0.0/11"}},
		{name: "managed control plane, problem Nodes, stale migration Lease, post-install", mode: preflight.ModePostInstall,
			seed: func(s *seed) {
				added := time.Now().Add(-42 * time.Minute)
				s.node(nodeSpec{name: "ip-10-0-1-20.ec2.internal", kubelet: v137, hostname: "ip-10-0-1-20.ec2.internal", providerID: "aws:///us-east-1a/i-0a1b2c3d4e5f60020"})
				s.node(nodeSpec{name: "ip-10-0-1-21.ec2.internal", kubelet: v137, hostname: "ip-10-0-1-21.ec2.internal", uninitialized: &added})
				s.node(nodeSpec{name: "ip-10-0-1-22.ec2.internal", kubelet: "v1.33.9", hostname: "ip-10-0-1-22.ec2.internal", providerID: "aws:////i-0a1b2c3d4e5f60022", noCloudLabels: true})
				s.node(nodeSpec{name: "i-0a1b2c3d4e5f60023", kubelet: "v1.38.0", hostname: "ip-10-0-1-23", providerID: "aws:///us-east-1b/i-0a1b2c3d4e5f60023", uninitialized: &time.Time{}})
				s.lease(ccmLease, "ccm-1_77aa", time.Second)
				s.lease(migrationLease, "ip-10-0-0-10.ec2.internal_kcm", 10*time.Minute)
				s.pod(workload(corev1.NamespaceDefault, "openstack-cloud-controller-manager-q8d", "ip-10-0-1-20.ec2.internal", "registry.k8s.io/provider-os/openstack-cloud-controller-manager:v1.31.0"))
			},
			want: merged(cpSkipped, map[string]preflight.Status{IDNodesKubeletSkew: warn, IDNodesProviderID: fail, IDNodesUninitialized: fail, IDNodesCloudMetadata: fail,
				IDNodesHostnameLabel: warn, IDConflictsMigration: warn, IDConflictsOtherCCMPods: warn}),
			text: map[string]string{
				IDNodesKubeletSkew:       "kubelet outside the version skew policy against kube-apiserver v1.37.1 (none newer, at most 3 minors older) on 2 of 4 Nodes: i-0a1b2c3d4e5f60023 (kubelet v1.38.0), ip-10-0-1-22.ec2.internal (kubelet v1.33.9)",
				IDNodesProviderID:        "no AWS providerID the CCM can use on 1 of 4 Nodes: ip-10-0-1-21.ec2.internal (no providerID)",
				IDNodesUninitialized:     "still on 1 of 4 Nodes, oldest first: ip-10-0-1-21.ec2.internal (for 42m); 1 Node joined in the last 2m and is being initialised",
				IDNodesHostnameLabel:     "i-0a1b2c3d4e5f60023 (hostname ip-10-0-1-23)",
				IDNodesCloudMetadata:     "1 of 2 initialised Nodes lack what the CCM sets: ip-10-0-1-22.ec2.internal (no topology.kubernetes.io/zone, topology.kubernetes.io/region, node.kubernetes.io/instance-type)",
				IDConflictsMigration:     "kubectl -n kube-system delete lease cloud-provider-extraction-migration",
				IDConflictsOtherCCMPods:  "default/openstack-cloud-controller-manager-q8d",
				IDAPIServerCloudProvider: "managed (EKS)",
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newSeed(t, real)
			tc.seed(s)
			client := kubernetes.Interface(real)
			if tc.server != "" {
				client = withServerVersion{real, tc.server}
			}
			rep, err := preflight.Run(context.Background(), Checks(Input{Client: client, Mode: tc.mode}), preflight.Options{Mode: tc.mode})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s (mode %s)\n%s", tc.name, tc.mode, table(rep))
			ids := map[string]bool{}
			for _, f := range rep.Findings {
				ids[f.ID] = true
				want, ok := tc.want[f.ID]
				if !ok {
					want = preflight.StatusPass
				}
				if f.Status != want {
					t.Errorf("%s = %s, want %s: %s | %s", f.ID, f.Status, want, f.Message, f.Remediation)
				}
				if text := tc.text[f.ID]; text != "" && !strings.Contains(f.Message+" | "+f.Remediation, text) {
					t.Errorf("%s: %q not in %s | %s", f.ID, text, f.Message, f.Remediation)
				}
			}
			for id := range tc.want {
				if !ids[id] {
					t.Errorf("no finding for %s", id)
				}
			}
		})
	}
}

func merged(maps ...map[string]preflight.Status) map[string]preflight.Status {
	out := map[string]preflight.Status{}
	for _, m := range maps {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}
