package clusterchecks

import (
	"fmt"
	"path"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/awsccmctl/awsccmctl/internal/kubeadmapi"
	"github.com/awsccmctl/awsccmctl/internal/preflight"
)

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func forbidden(resource string) error {
	return apierrors.NewForbidden(schema.GroupResource{Resource: resource}, "", fmt.Errorf("RBAC: access denied"))
}

func TestParseClusterConfiguration(t *testing.T) {
	cases := []struct {
		name, data string
		api, kcm   string // "name=value,..." of the extraArgs
		err        string
	}{
		{name: "valid-v1beta3-map", data: `apiVersion: kubeadm.k8s.io/v1beta3
kind: ClusterConfiguration
kubernetesVersion: v1.26.15
apiServer:
  extraArgs:
    enable-admission-plugins: NodeRestriction,PersistentVolumeLabel
    cloud-provider: aws
controllerManager:
  extraArgs:
    cloud-provider: aws
`, api: "cloud-provider=aws,enable-admission-plugins=NodeRestriction,PersistentVolumeLabel", kcm: "cloud-provider=aws"},
		{name: "valid-v1beta4-list-with-repeats", data: `apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
apiServer:
  extraArgs:
  - name: enable-admission-plugins
    value: NodeRestriction
  - name: enable-admission-plugins
    value: PersistentVolumeLabel
controllerManager:
  extraArgs: []
`, api: "enable-admission-plugins=NodeRestriction,enable-admission-plugins=PersistentVolumeLabel"},
		{name: "valid-no-extraArgs", data: "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\napiServer: {}\n"},
		{name: "invalid-kind", data: "apiVersion: kubeadm.k8s.io/v1beta4\nkind: InitConfiguration\n", err: "want kubeadm.k8s.io/v1beta3 or v1beta4 ClusterConfiguration"},
		{name: "invalid-extraArgs-scalar", data: "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\napiServer:\n  extraArgs: yes\n", err: "want a map (v1beta3) or a list"},
		{name: "invalid-v1beta3-nested", data: "apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\napiServer:\n  extraArgs:\n    a: {b: c}\n", err: "as a map (v1beta3)"},
		{name: "invalid-yaml", data: "apiVersion: [", err: "yaml"},
	}
	render := func(e kubeadmapi.ExtraArgs) string {
		var s []string
		for _, a := range e {
			s = append(s, a.Name+"="+a.Value)
		}
		return strings.Join(s, ",")
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cc, err := parseClusterConfiguration(tc.data)
			if tc.err != "" {
				if err == nil || !contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := render(cc.APIServer.ExtraArgs); got != tc.api {
				t.Errorf("apiServer.extraArgs = %s, want %s", got, tc.api)
			}
			if got := render(cc.ControllerManager.ExtraArgs); got != tc.kcm {
				t.Errorf("controllerManager.extraArgs = %s, want %s", got, tc.kcm)
			}
		})
	}
}

func TestCommandLine(t *testing.T) {
	cases := []struct {
		name string
		toks []string
		want string
	}{
		{name: "kubeadm", toks: []string{"kube-apiserver", "--cloud-provider=aws", "--v=2"}, want: "kube-apiserver --cloud-provider=aws --v=2"},
		{name: "kops go-runner", toks: []string{"/go-runner", "--log-file=/var/log/kube-apiserver.log", "--also-stdout", "/usr/local/bin/kube-apiserver", "--cloud-provider=aws"},
			want: "/usr/local/bin/kube-apiserver --cloud-provider=aws"},
		{name: "older kops sh -c", toks: []string{"/bin/sh", "-c", "mkfifo /tmp/pipe; (tee -a /var/log/kcm.log < /tmp/pipe & ) ; exec /usr/local/bin/kube-controller-manager --cloud-provider=aws \"--leader-elect=true\" > /tmp/pipe 2>&1"},
			want: "/usr/local/bin/kube-controller-manager --cloud-provider=aws --leader-elect=true"},
		{name: "args only under the image's entrypoint", toks: []string{"--cloud-provider=external"}, want: "kube-controller-manager --cloud-provider=external"},
		{name: "script without the binary", toks: []string{"sh", "-c", "sleep 1"}, want: "kube-controller-manager"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			comp := kcm
			if contains(tc.name, "kubeadm") || contains(tc.name, "go-runner") {
				comp = apiServer
			}
			if got := strings.Join(commandLine(comp, tc.toks), " "); got != tc.want {
				t.Errorf("commandLine = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestMerge(t *testing.T) {
	pass, fail := preflight.Pass("ok"), preflight.Fail("fix it", "bad")
	cases := []struct {
		name    string
		results []nodeResult
		want    preflight.Result
	}{
		{name: "all pass, one message", results: []nodeResult{{"a", pass}, {"b", pass}},
			want: preflight.Result{Status: preflight.StatusPass, Message: "ok (on a, b)"}},
		{name: "one fails", results: []nodeResult{{"a", pass}, {"b", fail}},
			want: preflight.Result{Status: preflight.StatusFail, Message: "bad (on b); other control-plane nodes: a pass", Remediation: "fix it"}},
		{name: "two fail", results: []nodeResult{{"a", fail}, {"b", fail}},
			want: preflight.Result{Status: preflight.StatusFail, Message: "bad (on a, b)", Remediation: "fix it; do it on every control-plane node listed, one at a time"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := merge(tc.results); got != tc.want {
				t.Errorf("merge = %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestLeaseState(t *testing.T) {
	now := time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)
	at := func(ago time.Duration) *metav1.MicroTime { return ptr.To(metav1.NewMicroTime(now.Add(-ago))) }
	cases := []struct {
		name      string
		spec      coordinationv1.LeaseSpec
		held      bool
		stale     bool
		formatted string
	}{
		{name: "fresh", spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("cp_1"), LeaseDurationSeconds: ptr.To[int32](15), RenewTime: at(3 * time.Second)},
			held: true, formatted: "holder cp_1, renewed 3s ago, leaseDurationSeconds 15"},
		{name: "expired, not yet stale", spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("cp_1"), LeaseDurationSeconds: ptr.To[int32](15), RenewTime: at(20 * time.Second)}},
		{name: "stale", spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("cp_1"), LeaseDurationSeconds: ptr.To[int32](15), RenewTime: at(10 * time.Minute)}, stale: true},
		{name: "released", spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(""), RenewTime: at(time.Second)},
			formatted: "holder nobody, renewed 1s ago, leaseDurationSeconds 15"},
		{name: "no times: creation counts", spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("x")}, stale: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(now.Add(-time.Hour))}, Spec: tc.spec}
			s := stateOf(l, now)
			if s.held() != tc.held || (s.age > 2*s.duration) != tc.stale {
				t.Errorf("held %t stale %t, want %t %t (%s)", s.held(), s.age > 2*s.duration, tc.held, tc.stale, s)
			}
			if tc.formatted != "" && s.String() != tc.formatted {
				t.Errorf("String() = %q, want %q", s, tc.formatted)
			}
		})
	}
}

func TestProviderIDProblem(t *testing.T) {
	cases := map[string]string{
		"aws:///us-east-1a/i-0123456789abcdef0": "",
		"":                                      "no providerID",
		"aws:////i-0123456789abcdef0":           "", // no zone: the CCM accepts it
		"aws://us-east-1a/i-0123456789abcdef0":  "aws://us-east-1a/i-0123456789abcdef0 is not aws:///<zone>/<instance-id>",
		"i-0123456789abcdef0":                   "i-0123456789abcdef0 is not aws:///<zone>/<instance-id>",
		"gce://p/z/n":                           "gce://p/z/n: ",
	}
	for pid, want := range cases {
		got := providerIDProblem(pid)
		if (want == "") != (got == "") || !strings.HasPrefix(got, want) {
			t.Errorf("providerIDProblem(%q) = %q, want %q...", pid, got, want)
		}
	}
}

func FuzzParseClusterConfiguration(f *testing.F) {
	f.Add("apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\napiServer:\n  extraArgs:\n    a: b\n")
	f.Add("apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\napiServer:\n  extraArgs:\n  - {name: a, value: b}\n")
	f.Add("apiServer: {extraArgs: null}")
	f.Fuzz(func(t *testing.T, data string) {
		cc, err := parseClusterConfiguration(data)
		if err == nil && (cc.Kind != "ClusterConfiguration" || !strings.HasPrefix(cc.APIVersion, "kubeadm.k8s.io/")) {
			t.Fatalf("accepted %q as %+v", data, cc)
		}
	})
}

func FuzzCommandLine(f *testing.F) {
	f.Add("/go-runner --also-stdout /usr/local/bin/kube-apiserver --a=b")
	f.Add("sh -c exec /usr/local/bin/kube-apiserver --a=b > /x 2>&1")
	f.Fuzz(func(t *testing.T, line string) {
		toks := strings.Fields(line)
		if len(toks) > 2 && toks[1] == "-c" {
			toks = []string{toks[0], "-c", strings.Join(toks[2:], " ")}
		}
		argv := commandLine(apiServer, toks)
		if len(argv) == 0 || path.Base(strings.Trim(argv[0], `"'`)) != apiServer {
			t.Fatalf("commandLine(%q) = %q: does not start with the binary", toks, argv)
		}
	})
}
