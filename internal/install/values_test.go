package install

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/awsccmctl/awsccmctl/internal/fielderr"
	"github.com/awsccmctl/awsccmctl/internal/leadermigration"
	"github.com/awsccmctl/awsccmctl/pkg/cloudconfig"
)

func TestDefault(t *testing.T) {
	var v Values
	v.Default()
	if v.Namespace != "kube-system" || v.Image != DefaultImage() || v.Workload != WorkloadDaemonSet ||
		*v.Replicas != DefaultReplicas || !*v.LeaderElect || *v.Verbosity != DefaultVerbosity ||
		len(v.Controllers) != 1 || v.Controllers[0] != "*" || v.CloudConfig == nil ||
		v.CPURequest != DefaultCPURequest || v.MemoryRequest != DefaultMemoryRequest || v.BindAddress != DefaultBindAddress {
		t.Fatalf("defaults: %+v", v)
	}
	if !strings.HasPrefix(v.Image, "ghcr.io/awsccmctl/aws-cloud-controller-manager:") {
		t.Errorf("default image %q", v.Image)
	}
	if err := v.Validate(); err != nil {
		t.Fatalf("the defaults do not validate: %v", err)
	}
	// Default never changes a set value.
	zero := int32(0)
	f := false
	set := Values{Namespace: "ns", Image: "x:1", Replicas: &zero, LeaderElect: &f, Controllers: []string{"route"}}
	set.Default()
	if set.Namespace != "ns" || set.Image != "x:1" || *set.Replicas != 0 || *set.LeaderElect || set.Controllers[0] != "route" {
		t.Errorf("Default overwrote set values: %+v", set)
	}
}

// TestValidate: every case lists the problems it must report, all at once.
func TestValidate(t *testing.T) {
	zero := int32(0)
	bad := 11
	for _, tc := range []struct {
		name   string
		values Values
		want   []string
	}{
		{"valid-defaults", Values{}, nil},
		{"valid-digest", Values{Image: "registry.example.com:5000/ccm@sha256:" + sha256Hex}, nil},
		{"valid-tag-and-digest", Values{Image: "localhost/ccm:v1@sha256:" + sha256Hex}, nil},
		{"valid-routes", Values{ConfigureCloudRoutes: true, ClusterCIDR: "10.244.0.0/16"}, nil},
		{"valid-controllers", Values{Controllers: []string{"*", "-route", "service-lb-controller"}}, nil},
		{"valid-controllers-tagging", Values{Controllers: []string{"*", "tagging"}}, nil},
		{"invalid-cloud-routes-without-cidr", Values{ConfigureCloudRoutes: true}, []string{"clusterCIDR: configureCloudRoutes"}},
		{"invalid-allocate-node-cidrs", Values{AllocateNodeCIDRs: true, ClusterCIDR: "10.244.0.0/16"}, []string{"allocateNodeCIDRs: the CCM allocates no node CIDRs"}},
		{"invalid-cidr", Values{ClusterCIDR: "10.244.0.0"}, []string{`clusterCIDR "10.244.0.0"`}},
		{"invalid-cidr-two-ipv4", Values{ClusterCIDR: "10.0.0.0/16,10.1.0.0/16"}, []string{"dual stack"}},
		{"invalid-deployment-zero-replicas", Values{Workload: WorkloadDeployment, Replicas: &zero}, []string{"replicas"}},
		{"invalid-workload", Values{Workload: "StatefulSet"}, []string{`workload "StatefulSet"`}},
		{"invalid-image-uppercase", Values{Image: "Registry/CCM:v1"}, []string{"not an image reference"}},
		{"invalid-image-no-tag", Values{Image: "ghcr.io/awsccmctl/aws-cloud-controller-manager"}, []string{"pin a tag or digest"}},
		{"invalid-image-space", Values{Image: "ccm:v1 --privileged"}, []string{"not an image reference"}},
		{"invalid-namespace", Values{Namespace: "Kube_System"}, []string{`namespace "Kube_System"`}},
		{"invalid-cluster-name", Values{ClusterName: "my cluster"}, []string{"clusterName"}},
		{"invalid-controller", Values{Controllers: []string{"*", "-nodeipam", "-*"}}, []string{`"-nodeipam"`, `"-*"`}},
		{"invalid-verbosity", Values{Verbosity: &bad}, []string{"verbosity 11"}},
		{"invalid-requests", Values{CPURequest: "lots", MemoryRequest: "-1Gi"}, []string{`cpuRequest "lots"`, `memoryRequest "-1Gi"`}},
		{"invalid-bind-address", Values{BindAddress: "localhost"}, []string{`bindAddress "localhost"`}},
		{"invalid-extra-args", Values{ExtraArgs: map[string]string{"--v": "3", "cluster-name": "x", "Node_Monitor": "1"}},
			[]string{`extraArgs "--v"`, `extraArgs "cluster-name": set by the installer`, `extraArgs "Node_Monitor"`}},
		{"invalid-cloud-config", Values{CloudConfig: &cloudconfig.Config{Global: cloudconfig.Global{Region: "us-east-1a", VPC: "vpc_1"}}},
			[]string{"cloudConfig:", "Region", "VPC"}},
		{"invalid-leader-migration-namespace", Values{Namespace: "cloud-system", LeaderMigrationConfig: lmConfig(t, leadermigration.ComponentCCM)},
			[]string{`namespace "cloud-system": leader migration needs the CCM in kube-system`}},
		{"invalid-leader-migration-no-election", Values{LeaderElect: ptr(false), LeaderMigrationConfig: lmConfig(t, leadermigration.ComponentCCM)},
			[]string{"leader migration needs leader election"}},
		{"invalid-leader-migration-kcm-file", Values{LeaderMigrationConfig: lmConfig(t, leadermigration.ComponentKCM)},
			[]string{"leaderMigrationConfig:", `assigned to "kube-controller-manager"`}},
		{"valid-expected-nodes", Values{ExpectedNodes: ptr(1)}, nil},
		{"valid-sizing-in-extra-args", Values{ExtraArgs: map[string]string{"kube-api-qps": "50", "concurrent-node-syncs": "3"}}, nil},
		{"invalid-expected-nodes-zero", Values{ExpectedNodes: ptr(0)}, []string{"expectedNodes 0: must be at least 1"}},
		{"invalid-expected-nodes-negative", Values{ExpectedNodes: ptr(-5)}, []string{"expectedNodes -5: must be at least 1"}},
		{"invalid-sizing-extra-arg-value", Values{ExtraArgs: map[string]string{"kube-api-burst": "lots"}}, []string{`extraArgs "kube-api-burst": value "lots": not a int32`}},
		{"valid-pod-options", Values{PodOptions: podOptionsCase()}, nil},
		{"invalid-pod-labels-selector", Values{PodOptions: PodOptions{PodLabels: map[string]string{LabelName: "x", "team": "a b"}}},
			[]string{`podLabels "app.kubernetes.io/name": set by the installer`, `podLabels "team" value "a b"`}},
		{"invalid-pod-annotation-hash", Values{PodOptions: PodOptions{PodAnnotations: map[string]string{AnnotationCloudConfigHash: "x"}}},
			[]string{`podAnnotations "awsccmctl.io/cloud-config-sha256": set by the installer`}},
		{"invalid-tolerations", Values{PodOptions: PodOptions{Tolerations: []corev1.Toleration{{Key: "a", Operator: "In"}, {Effect: "Never"}}}},
			[]string{`tolerations[0]: operator "In"`, `tolerations[1]: effect "Never"`, "tolerations[1]: an empty key needs operator Exists"}},
		{"invalid-env-name", Values{PodOptions: PodOptions{Env: []corev1.EnvVar{{Name: "1PROXY"}}}}, []string{`env[0] "1PROXY"`}},
		{"invalid-volumes", Values{PodOptions: PodOptions{
			ExtraVolumes:      []corev1.Volume{{Name: "cloud-config"}, {Name: "Certs"}},
			ExtraVolumeMounts: []corev1.VolumeMount{{Name: "missing", MountPath: "/etc/kubernetes/cloud-config/x"}, {Name: "cloud-config", MountPath: "rel"}},
		}}, []string{`extraVolumes[0] "cloud-config": the name is taken`, `extraVolumes[1] "Certs"`, `extraVolumeMounts[0] "missing": no such volume`,
			`extraVolumeMounts[0] mountPath "/etc/kubernetes/cloud-config/x": would hide the cloud config`, `extraVolumeMounts[1] mountPath "rel"`}},
		{"invalid-dns-policy", Values{PodOptions: PodOptions{DNSPolicy: corev1.DNSClusterFirst}}, []string{`dnsPolicy "ClusterFirst": want Default or ClusterFirstWithHostNet`}},
		{"invalid-everything-at-once", Values{
			Namespace: "-", Image: "UPPER", Workload: WorkloadDeployment, Replicas: &zero, ConfigureCloudRoutes: true,
		}, []string{"namespace", "image", "replicas", "clusterCIDR"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := tc.values
			v.Default()
			err := v.Validate()
			if tc.want == nil {
				if err != nil {
					t.Fatalf("unexpected problems: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, want %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not mention %q:\n%v", w, err)
				}
			}
			// Every problem names its field, typed, so a command can name
			// the flag without reading the message.
			for _, p := range fielderr.Problems(err) {
				fe, ok := fielderr.FieldOf(p)
				if !ok || fe.Field == "" || !strings.HasPrefix(p.Error(), fe.Field) {
					t.Errorf("problem %q is not a *fielderr.Error starting with its field (%+v)", p, fe)
				}
			}
			// Render refuses what Validate refuses.
			if _, rerr := Render(v); rerr == nil {
				t.Error("Render accepted invalid values")
			}
		})
	}
}

func lmConfig(t *testing.T, component string) []byte {
	t.Helper()
	data, err := leadermigration.Render(component)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestExtraArgsMustBeFlagsOfTheCCM: a flag the binary lacks, or a value
// its flag type refuses, would crash-loop the CCM; Validate says so.
func TestExtraArgsMustBeFlagsOfTheCCM(t *testing.T) {
	v := Values{Image: testImage, ExtraArgs: map[string]string{"no-such-flag": "1", "node-monitor-period": "soon",
		"concurrent-service-syncs": "two", "kube-api-qps": "fast", "node-status-update-frequency": "1m"}}
	v.Default()
	err := v.Validate()
	for _, want := range []string{`extraArgs "no-such-flag": not a flag of aws-cloud-controller-manager`,
		`extraArgs "node-monitor-period": value "soon": not a duration`, `extraArgs "concurrent-service-syncs": value "two": not a int32`,
		`extraArgs "kube-api-qps": value "fast": not a float32`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	if err != nil && strings.Contains(err.Error(), "node-status-update-frequency") {
		t.Errorf("a valid extra arg refused: %v", err)
	}
}

// TestRegionIsBlamedOnTheRegion: a bad Region is the region's problem,
// not the cloud config's, and the cloud config's own problems still show.
func TestRegionIsBlamedOnTheRegion(t *testing.T) {
	v := Values{Image: testImage, Region: "moon-1"}
	v.Default()
	err := v.Validate()
	if err == nil || !strings.HasPrefix(err.Error(), `region "moon-1" is not an AWS region name`) || strings.Contains(err.Error(), "cloudConfig") {
		t.Errorf("error %v", err)
	}
	cc, perr := cloudconfig.Parse([]byte("[Global]\nZone = us-east-1a\nVPC = nope\n"))
	if perr != nil {
		t.Fatal(perr)
	}
	v = Values{Image: testImage, Region: "moon-1", CloudConfig: cc}
	v.Default()
	err = v.Validate()
	if err == nil || !strings.Contains(err.Error(), `region "moon-1"`) || !strings.Contains(err.Error(), "cloudConfig: ") || strings.Contains(err.Error(), `Region "moon-1"`) {
		t.Errorf("error %v", err)
	}
	// A good region overrides the file's and lands in the rendered file.
	v = Values{Image: testImage, Region: "eu-west-1", CloudConfig: &cloudconfig.Config{Global: cloudconfig.Global{Region: "us-east-1"}}}
	out, rerr := Render(v)
	if rerr != nil || !strings.Contains(string(out), "Region = eu-west-1") {
		t.Errorf("render: %v\n%s", rerr, out)
	}
	if v.CloudConfig.Global.Region != "us-east-1" {
		t.Errorf("the caller's cloud config was changed")
	}
}

func TestValidateImage(t *testing.T) {
	for _, ok := range []string{"nginx:1", "registry.example.com:5000/a/b:v1.2", "ghcr.io/x/y@sha256:" + strings.Repeat("a", 64)} {
		if err := ValidateImage(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for bad, want := range map[string]string{"": "empty", "Foo:1": "not an image reference", "a b:1": "not an image reference",
		"nginx": "pin a tag or digest", "x:" + strings.Repeat("t", 200): "not an image reference"} {
		if err := ValidateImage(bad); err == nil || !strings.HasPrefix(err.Error(), "image ") || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", bad, err, want)
		}
	}
}
