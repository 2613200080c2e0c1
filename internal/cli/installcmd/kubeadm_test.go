package installcmd

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"testing"

	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
	"github.com/awsccmctl/awsccmctl/internal/install/kubeadmconfig"
	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// runKubeadm runs `install kubeadm` with deps and returns stdout and the error.
func runKubeadm(t *testing.T, deps kubeadmDeps, args ...string) (string, error) {
	t.Helper()
	if deps.kubeadmVersion == nil {
		deps.kubeadmVersion = func(context.Context) (string, error) {
			t.Error("kubeadm version asked although --kubernetes-version is set")
			return "", kubeadmconfig.ErrNoKubeadm
		}
	}
	if deps.nodeIdentity == nil {
		deps.nodeIdentity = kubeadmconfig.ReadNodeIdentity
	}
	var out, errOut bytes.Buffer
	cmd := newKubeadmCommandWith(Streams{Out: &out, Err: &errOut}, deps)
	cmd.SetArgs(args)
	cmd.SetOut(&errOut)
	cmd.SetErr(&errOut)
	err := cmd.Execute()
	return out.String(), err
}

func noKubeadm(context.Context) (string, error) { return "", kubeadmconfig.ErrNoKubeadm }

func TestKubeadmOutput(t *testing.T) {
	const pid = "aws:///us-east-1a/i-0a1b2c3d4e5f60001"
	for _, tc := range []struct {
		name    string
		args    []string
		want    []string
		notWant []string
	}{
		{"v1.30-is-v1beta3-maps", []string{"--kubernetes-version", "v1.30.4"}, []string{
			"apiVersion: kubeadm.k8s.io/v1beta3\ncontrollerManager:\n  extraArgs:\n    cloud-provider: external\nkind: ClusterConfiguration\nkubernetesVersion: v1.30.4\n",
			"kind: InitConfiguration\nnodeRegistration:\n  kubeletExtraArgs:\n    cloud-provider: external\n",
			"kind: JoinConfiguration\nnodeRegistration:\n  kubeletExtraArgs:\n    cloud-provider: external\n",
		}, []string{"v1beta4", "provider-id", "name:"}},
		{"v1.37-is-v1beta4-lists", []string{"--kubernetes-version", "v1.37.1", "--provider-id", pid, "--node-name", "ip-10-0-1-10.ec2.internal"}, []string{
			"apiVersion: kubeadm.k8s.io/v1beta4\ncontrollerManager:\n  extraArgs:\n  - name: cloud-provider\n    value: external\nkind: ClusterConfiguration\nkubernetesVersion: v1.37.1\n",
			"kind: JoinConfiguration\nnodeRegistration:\n  kubeletExtraArgs:\n  - name: cloud-provider\n    value: external\n  - name: provider-id\n    value: " + pid + "\n  name: ip-10-0-1-10.ec2.internal\n",
		}, []string{"v1beta3"}},
		{"api-version-overrides", []string{"--kubernetes-version", "v1.35.4", "--api-version", kubeadmconfig.V1beta3}, []string{
			"apiVersion: kubeadm.k8s.io/v1beta3\n", "    cloud-provider: external\n"}, []string{"v1beta4"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := runKubeadm(t, kubeadmDeps{}, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks\n%s\ngot:\n%s", w, out)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(out, w) {
					t.Errorf("output has %q:\n%s", w, out)
				}
			}
		})
	}
	// stdout is exactly what the library renders.
	out, err := runKubeadm(t, kubeadmDeps{}, "--kubernetes-version", "v1.37.1", "--provider-id", pid)
	if err != nil {
		t.Fatal(err)
	}
	want, err := kubeadmconfig.Render(kubeadmconfig.Options{KubernetesVersion: "v1.37.1", ProviderID: pid})
	if err != nil {
		t.Fatal(err)
	}
	if out != string(want) {
		t.Errorf("stdout differs from kubeadmconfig.Render:\n%s", out)
	}
}

func TestKubeadmVersionLookup(t *testing.T) {
	t.Run("valid-from-local-kubeadm", func(t *testing.T) {
		asked := 0
		out, err := runKubeadm(t, kubeadmDeps{kubeadmVersion: func(context.Context) (string, error) {
			asked++
			return "v1.30.2", nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		if asked != 1 || !strings.Contains(out, "kubernetesVersion: v1.30.2\n") || !strings.Contains(out, kubeadmconfig.V1beta3) {
			t.Errorf("asked %d times; output:\n%s", asked, out)
		}
	})
	t.Run("valid-flag-wins", func(t *testing.T) {
		out, err := runKubeadm(t, kubeadmDeps{}, "--kubernetes-version", "v1.37.0")
		if err != nil || !strings.Contains(out, "kubernetesVersion: v1.37.0\n") {
			t.Fatalf("err %v, output:\n%s", err, out)
		}
	})
	t.Run("valid-no-kubeadm-but-api-version", func(t *testing.T) {
		out, err := runKubeadm(t, kubeadmDeps{kubeadmVersion: noKubeadm}, "--api-version", kubeadmconfig.V1beta4)
		if err != nil || strings.Contains(out, "kubernetesVersion") || !strings.Contains(out, kubeadmconfig.V1beta4) {
			t.Fatalf("err %v, output:\n%s", err, out)
		}
	})
	for _, tc := range []struct {
		name   string
		lookup kubeadmconfig.VersionFunc
		want   []string
	}{
		{"invalid-no-kubeadm", noKubeadm, []string{"--kubernetes-version", "no kubeadm binary on PATH"}},
		{"invalid-kubeadm-fails", func(context.Context) (string, error) { return "", errors.New("exit status 1") },
			[]string{"--kubernetes-version", "exit status 1"}},
		{"invalid-kubeadm-garbage", func(context.Context) (string, error) { return "not-a-version", nil },
			[]string{"--kubernetes-version", "not-a-version"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := runKubeadm(t, kubeadmDeps{kubeadmVersion: tc.lookup})
			if code := exitcode.Of(err); code != exitcode.Usage {
				t.Fatalf("exit code %d (%v), want %d", code, err, exitcode.Usage)
			}
			if out != "" {
				t.Errorf("wrote output despite the error:\n%s", out)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not name %q: %v", w, err)
				}
			}
		})
	}
}

func TestKubeadmUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"invalid-provider-id", []string{"--provider-id", "aws:///i-0a1b2c3d4e5f60001"}, []string{"--provider-id"}},
		{"invalid-provider-id-garbage", []string{"--provider-id", "gce://x/y/z"}, []string{"--provider-id", "gce://x/y/z"}},
		{"invalid-api-version", []string{"--api-version", "kubeadm.k8s.io/v1beta2"}, []string{"--api-version", "v1beta2"}},
		{"invalid-node-name", []string{"--node-name", "Node_1"}, []string{"--node-name", "Node_1"}},
		{"invalid-all-at-once", []string{"--api-version", "v1", "--provider-id", "nope", "--node-name", "-x"}, []string{"--api-version", "--provider-id", "--node-name"}},
		// kubeadm 1.36 removed v1beta3.
		{"api-version-kubeadm-cannot-read", []string{"--api-version", kubeadmconfig.V1beta3},
			[]string{"--api-version", "kubeadm 1.37 does not read it (kubeadm 1.22 to 1.35 read it)"}},
		{"kubernetes-version-label", []string{"--kubernetes-version", "stable"}, []string{"--kubernetes-version", `"stable"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := runKubeadm(t, kubeadmDeps{}, append([]string{"--kubernetes-version", "v1.37.1"}, tc.args...)...)
			if code := exitcode.Of(err); code != exitcode.Usage {
				t.Fatalf("exit code %d (%v), want %d", code, err, exitcode.Usage)
			}
			if out != "" {
				t.Errorf("wrote output despite the error:\n%s", out)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not name %q:\n%v", w, err)
				}
			}
		})
	}
}

// imdsEnv points the SDK's IMDS client at url, with no local AWS config.
func imdsEnv(t *testing.T, url string) {
	t.Helper()
	for k, v := range map[string]string{
		imdsEndpointEnv: url, "AWS_EC2_METADATA_DISABLED": "false",
		"AWS_CONFIG_FILE": os.DevNull, "AWS_SHARED_CREDENTIALS_FILE": os.DevNull,
		"AWS_ACCESS_KEY_ID": "AKIDKUBEADMTEST", "AWS_SECRET_ACCESS_KEY": "kubeadm-test-secret",
	} {
		t.Setenv(k, v)
	}
}

// TestKubeadmFromIMDS reads the node's identity from the emulator's IMDSv2,
// as a bootstrap script on the demo fixture's instance would.
func TestKubeadmFromIMDS(t *testing.T) {
	srv := awsemu.StartT(t, awsemu.DemoFixture())
	imdsEnv(t, srv.URL)
	// demo.yaml: imdsInstanceId i-0a1b2c3d4e5f60001 in subnet-0demo00000000000a
	// (us-east-1a), private IP 10.0.1.10.
	const (
		wantPID  = "aws:///us-east-1a/i-0a1b2c3d4e5f60001"
		wantName = "ip-10-0-1-10.ec2.internal"
	)

	out, err := runKubeadm(t, kubeadmDeps{}, "--kubernetes-version", "v1.37.1", "--from-imds")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out, "    value: "+wantPID+"\n  name: "+wantName+"\n"); n != 2 {
		t.Errorf("provider ID and node name from IMDS in %d of the 2 node configurations:\n%s", n, out)
	}
	if srv.Calls("imds", "") == 0 {
		t.Errorf("no IMDS call: %v", srv.CallCounts())
	}

	t.Run("valid-explicit-flags-win", func(t *testing.T) {
		out, err := runKubeadm(t, kubeadmDeps{}, "--kubernetes-version", "v1.37.1", "--from-imds", "--node-name", "mine")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, "value: "+wantPID+"\n  name: mine\n") || strings.Contains(out, wantName) {
			t.Errorf("--node-name must beat IMDS, provider ID must come from IMDS:\n%s", out)
		}
	})
	t.Run("valid-both-explicit-no-imds-call", func(t *testing.T) {
		out, err := runKubeadm(t, kubeadmDeps{nodeIdentity: func(context.Context) (kubeadmconfig.NodeIdentity, error) {
			t.Error("IMDS asked although both flags are set")
			return kubeadmconfig.NodeIdentity{}, errors.New("unexpected")
		}}, "--kubernetes-version", "v1.37.1", "--from-imds", "--node-name", "mine", "--provider-id", "aws:///us-west-2b/i-0123456789abcdef0")
		if err != nil || !strings.Contains(out, "value: aws:///us-west-2b/i-0123456789abcdef0\n  name: mine\n") {
			t.Fatalf("err %v, output:\n%s", err, out)
		}
	})
	t.Run("invalid-imds-unreachable", func(t *testing.T) {
		l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		closed := "http://" + l.Addr().String()
		_ = l.Close()
		imdsEnv(t, closed)
		out, err := runKubeadm(t, kubeadmDeps{}, "--kubernetes-version", "v1.37.1", "--from-imds")
		if code := exitcode.Of(err); code != exitcode.Unreachable {
			t.Fatalf("exit code %d (%v), want %d", code, err, exitcode.Unreachable)
		}
		if out != "" {
			t.Errorf("wrote output despite the error:\n%s", out)
		}
		for _, w := range []string{"--from-imds", imdsEndpointEnv} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("error does not name %s: %v", w, err)
			}
		}
	})
}

// TestKubeadmNormalisesTheVersion: kubeadm refuses kubernetesVersion
// "1.31"; the command writes v1.31.0 (and picks v1beta4 for it).
func TestKubeadmNormalisesTheVersion(t *testing.T) {
	out, err := runKubeadm(t, kubeadmDeps{}, "--kubernetes-version", "1.31")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "kubernetesVersion: v1.31.0\n") || !strings.Contains(out, kubeadmconfig.V1beta4) {
		t.Errorf("output:\n%s", out)
	}
}

// TestKubeadmProviderIDOneMessage: a short instance ID and a well-formed
// bare one are refused alike, by the one providerID rule.
func TestKubeadmProviderIDOneMessage(t *testing.T) {
	var msgs []string
	for _, id := range []string{"i-123", "i-0123456789abcdef0"} {
		_, err := runKubeadm(t, kubeadmDeps{}, "--kubernetes-version", "v1.37.1", "--provider-id", id)
		if exitcode.Of(err) != exitcode.Usage {
			t.Fatalf("%s: %v", id, err)
		}
		msgs = append(msgs, strings.ReplaceAll(err.Error(), `"`+id+`"`, `"ID"`))
	}
	if msgs[0] != msgs[1] || !strings.Contains(msgs[0], "--provider-id") {
		t.Errorf("two messages for one mistake:\n%s\n%s", msgs[0], msgs[1])
	}
}

const mergeFixtures = "../../install/kubeadmconfig/testdata/merge/"

// TestKubeadmMerge: --merge prints the user's file with the settings
// merged in (kubeadmconfig tests what the merge keeps), without asking the
// local kubeadm for a version.
func TestKubeadmMerge(t *testing.T) {
	const pid = "aws:///us-east-1a/i-0a1b2c3d4e5f60001"
	out, err := runKubeadm(t, kubeadmDeps{}, "--merge", mergeFixtures+"valid-v1beta4-init.yaml", "--provider-id", pid)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"kind: KubeProxyConfiguration\nmode: ipvs\n", "      value: tier=control-plane\n",
		"    - name: cloud-provider\n      value: external\n    - name: provider-id\n      value: " + pid + "\n"} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	if err := kubeadmconfig.Check([]byte(out), kubeadmconfig.Options{ProviderID: pid}); err != nil {
		t.Errorf("Check: %v", err)
	}
}

func TestKubeadmMergeUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"missing-file", []string{"--merge", "testdata/nope.yaml"}, []string{"--merge", "nope.yaml"}},
		{"cloud-provider-aws", []string{"--merge", mergeFixtures + "invalid-cloud-provider-aws.yaml"},
			[]string{"--merge", `controllerManager.extraArgs cloud-provider is "aws"`, `kubeletExtraArgs cloud-provider is "aws"`}},
		{"unknown-fields", []string{"--merge", mergeFixtures + "invalid-unknown-fields.yaml"},
			[]string{"--merge", `unknown field "nodeRegistration.kubeletExtraArg"`, `unknown field "maxPod"`}},
		{"v1beta3-file-for-1.37", []string{"--merge", mergeFixtures + "invalid-v1beta3-list-args.yaml", "--kubernetes-version", "1.37"},
			[]string{"--merge", "kubeadm 1.37 does not read it"}},
		{"other-api-version", []string{"--merge", mergeFixtures + "valid-v1beta4-join.yaml", "--api-version", kubeadmconfig.V1beta3},
			[]string{"--api-version", "the file is kubeadm.k8s.io/v1beta4"}},
		{"bad-provider-id", []string{"--merge", mergeFixtures + "valid-v1beta4-join.yaml", "--provider-id", "i-123"}, []string{"--provider-id"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := runKubeadm(t, kubeadmDeps{}, tc.args...)
			if code := exitcode.Of(err); code != exitcode.Usage {
				t.Fatalf("exit code %d (%v), want %d", code, err, exitcode.Usage)
			}
			if out != "" {
				t.Errorf("wrote output despite the error:\n%s", out)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not name %q:\n%v", w, err)
				}
			}
		})
	}
}
