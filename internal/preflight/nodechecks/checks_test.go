package nodechecks

import (
	"context"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/awsccmctl/awsccmctl/internal/nodefiles"
	"github.com/awsccmctl/awsccmctl/internal/preflight"
)

// run runs the node checks and returns the findings by ID.
func run(t *testing.T, in Input) map[string]preflight.Finding {
	t.Helper()
	rep, err := preflight.Run(context.Background(), Checks(in), preflight.Options{Mode: in.Mode})
	if err != nil {
		t.Fatalf("preflight.Run: %v", err)
	}
	out := map[string]preflight.Finding{}
	for _, f := range rep.Findings {
		out[f.ID] = f
	}
	return out
}

func statuses(findings map[string]preflight.Finding) map[string]preflight.Status {
	out := map[string]preflight.Status{}
	for id, f := range findings {
		out[id] = f.Status
	}
	return out
}

const (
	pass = preflight.StatusPass
	warn = preflight.StatusWarn
	fail = preflight.StatusFail
	skip = preflight.StatusSkip
)

var (
	pre     = preflight.ModePreInstall
	migrate = preflight.ModePreMigrate
	post    = preflight.ModePostInstall
)

// table builds the expected statuses in Checks order.
func table(s ...preflight.Status) map[string]preflight.Status {
	ids := []string{IDNodeFilesReadable, IDVersionsControlPlane, IDAPIServerCloudProvider, IDAPIServerCloudConfig, IDAPIServerAdmission,
		IDKCMCloudProvider, IDKCMLeaderElect, IDKCMCloudRoutes, IDKubeletCloudProvider, IDKubeletNodeIdentity, IDKubeletSkew, IDKubeletECRProvider}
	out := map[string]preflight.Status{}
	for i, id := range ids {
		out[id] = s[i]
	}
	return out
}

// TestFixtureFindings is the evidence: for each node fixture and mode, the
// exact status of every check.
func TestFixtureFindings(t *testing.T) {
	//                       files versions api-cp api-cc admission kcm-cp leader routes kubelet identity skew ecr
	intreeInstall := table(pass, pass, fail, fail, fail, fail, pass, pass, fail, warn, skip, warn)
	external := table(pass, pass, pass, pass, pass, pass, pass, warn, pass, pass, skip, warn)
	worker := table(pass, skip, skip, skip, skip, skip, skip, skip, pass, pass, skip, pass)
	kopsCP := table(pass, pass, pass, pass, pass, pass, pass, pass, pass, pass, skip, pass)
	broken := table(fail, skip, skip, skip, skip, skip, skip, skip, skip, skip, skip, skip)
	kubeadmNode := table(pass, skip, skip, skip, skip, skip, skip, skip, pass, pass, skip, warn)
	kubeadmNodeECR := table(pass, skip, skip, skip, skip, skip, skip, skip, pass, pass, skip, pass)
	cases := []struct {
		fixture string
		mode    preflight.Mode
		want    map[string]preflight.Status
	}{
		{"kubeadm-1.26-intree", pre, intreeInstall},
		{"kubeadm-1.26-intree", migrate, table(pass, pass, pass, pass, pass, pass, pass, pass, pass, warn, skip, warn)},
		{"kubeadm-1.26-intree", post, intreeInstall},
		{"kubeadm-external", pre, external},
		{"kubeadm-external", migrate, table(pass, warn, pass, pass, pass, warn, pass, warn, pass, pass, skip, warn)},
		{"kubeadm-external", post, external},
		{"kops-node", pre, worker},
		{"kops-node", migrate, worker},
		{"kops-node", post, worker},
		{"kops-control-plane", pre, kopsCP},
		{"kops-control-plane", migrate, table(pass, warn, pass, pass, pass, warn, pass, pass, pass, pass, skip, pass)},
		{"kops-control-plane", post, kopsCP},
		{"broken", pre, broken},
		{"broken", migrate, broken},
		{"broken", post, broken},
		{"kubeadm-external-node", pre, kubeadmNode},
		{"kubeadm-external-node", migrate, kubeadmNode},
		{"kubeadm-external-node", post, kubeadmNode},
		{"kubeadm-external-node-ecr", pre, kubeadmNodeECR},
		{"kubeadm-external-node-ecr", migrate, kubeadmNodeECR},
		{"kubeadm-external-node-ecr", post, kubeadmNodeECR},
	}
	for _, tc := range cases {
		t.Run(tc.fixture+"/"+string(tc.mode), func(t *testing.T) {
			n, err := nodefiles.Read(filepath.Join("..", "..", "nodefiles", "testdata", tc.fixture))
			if err != nil {
				t.Fatal(err)
			}
			got := run(t, Input{Node: n, Mode: tc.mode})
			if s := statuses(got); !reflect.DeepEqual(s, tc.want) {
				for id, want := range tc.want {
					if s[id] != want {
						t.Errorf("%s = %s, want %s: %s", id, s[id], want, got[id].Message)
					}
				}
			}
		})
	}
}

// TestFixtureRemediations checks that failures name the exact file and flag.
func TestFixtureRemediations(t *testing.T) {
	n, err := nodefiles.Read("../../nodefiles/testdata/kubeadm-1.26-intree")
	if err != nil {
		t.Fatal(err)
	}
	got := run(t, Input{Node: n, Mode: post})
	for id, want := range map[string][]string{
		IDAPIServerCloudProvider: {"remove --cloud-provider from /etc/kubernetes/manifests/kube-apiserver.yaml AND from apiServer.extraArgs", "kubeadm-config", "kubeadm upgrade"},
		IDAPIServerCloudConfig:   {"remove --cloud-config from /etc/kubernetes/manifests/kube-apiserver.yaml"},
		IDAPIServerAdmission:     {"remove PersistentVolumeLabel from --enable-admission-plugins in /etc/kubernetes/manifests/kube-apiserver.yaml"},
		IDKCMCloudProvider:       {"set --cloud-provider=external in /etc/kubernetes/manifests/kube-controller-manager.yaml AND in controllerManager.extraArgs", "migrate-from-intree"},
		IDKubeletCloudProvider:   {"change --cloud-provider=aws to --cloud-provider=external in KUBELET_KUBEADM_ARGS in /var/lib/kubelet/kubeadm-flags.env", "systemctl restart kubelet", "JoinConfiguration"},
		IDKubeletNodeIdentity:    {"set --provider-id=aws:///$ZONE/$INSTANCE_ID in KUBELET_KUBEADM_ARGS in /var/lib/kubelet/kubeadm-flags.env", "IMDS"},
	} {
		for _, w := range want {
			if !strings.Contains(got[id].Remediation, w) {
				t.Errorf("%s remediation %q lacks %q", id, got[id].Remediation, w)
			}
		}
	}
	if m := got[IDKubeletCloudProvider].Message; !strings.Contains(m, "--cloud-provider=aws") {
		t.Errorf("message does not show the value found: %q", m)
	}

	n, err = nodefiles.Read("../../nodefiles/testdata/broken")
	if err != nil {
		t.Fatal(err)
	}
	f := run(t, Input{Node: n, Mode: pre})[IDNodeFilesReadable]
	if !strings.Contains(f.Message, "/etc/kubernetes/manifests/kube-apiserver.yaml: not valid YAML") || !strings.Contains(f.Remediation, "fix or remove") {
		t.Errorf("node-files-readable = %q / %q", f.Message, f.Remediation)
	}
}

var idPattern = regexp.MustCompile(`^[a-z]+(-[a-z0-9]+)+$`)

// TestChecksShape pins the check list: stable IDs prefixed by their
// category, every check but the first requiring it.
func TestChecksShape(t *testing.T) {
	checks := Checks(Input{Node: &nodefiles.Node{StaticPods: map[string]*nodefiles.StaticPod{}}, Mode: pre})
	var ids []string
	for i, c := range checks {
		ids = append(ids, c.ID)
		if !idPattern.MatchString(c.ID) || !strings.HasPrefix(c.ID, c.Category+"-") {
			t.Errorf("%s: not lower-kebab-case prefixed by its category %q", c.ID, c.Category)
		}
		if (i == 0) != (len(c.Requires) == 0) || i > 0 && c.Requires[0] != IDNodeFilesReadable {
			t.Errorf("%s requires %q", c.ID, c.Requires)
		}
		if c.Title == "" || c.Run == nil || (c.Severity != preflight.SeverityError && c.Severity != preflight.SeverityWarning) {
			t.Errorf("%s is incomplete", c.ID)
		}
	}
	want := []string{IDNodeFilesReadable, IDVersionsControlPlane, IDAPIServerCloudProvider, IDAPIServerCloudConfig, IDAPIServerAdmission,
		IDKCMCloudProvider, IDKCMLeaderElect, IDKCMCloudRoutes, IDKubeletCloudProvider, IDKubeletNodeIdentity, IDKubeletSkew, IDKubeletECRProvider}
	if !reflect.DeepEqual(ids, want) {
		t.Errorf("IDs = %q", ids)
	}
}

// TestNoNodeFiles: a root with no kubelet or control-plane files (an empty
// directory, a laptop) is not a node, so node mode fails rather than
// passing on nothing; every other node check is skipped.
func TestNoNodeFiles(t *testing.T) {
	root := t.TempDir()
	n, err := nodefiles.Read(root)
	if err != nil {
		t.Fatal(err)
	}
	got := run(t, Input{Node: n, Mode: pre})
	files := got[IDNodeFilesReadable]
	if files.Status != fail || files.Message != "no kubelet or control-plane files found under "+root || !strings.Contains(files.Remediation, "--root") {
		t.Errorf("node-files-readable = %s %q / %q", files.Status, files.Message, files.Remediation)
	}
	for id, f := range got {
		if id != IDNodeFilesReadable && f.Status != skip {
			t.Errorf("%s = %s, want skip", id, f.Status)
		}
	}
}
