package release

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/awsccmctl/awsccmctl/internal/install/kubeadmconfig"
	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// The bootstrap script and the page that shows it.
const (
	bootstrapScript = "docs/examples/bootstrap-awsccmctl.sh"
	bootstrapPage   = "docs/install-release.md"
)

// kubernetesVersion is what the test passes the script as
// KUBERNETES_VERSION (the test bed has no kubeadm to ask).
const kubernetesVersion = "v1.37.1"

// checkBootstrap runs the docs' bootstrap script as a node would: the
// release served over HTTP from loopback, IMDS from the AWS emulator (the
// demo fixture's instance). The written kubeadm configuration must be
// what install kubeadm renders for that instance. A tampered archive, or a
// SHA256SUMS that does not list the archive, must stop the script before
// anything from the archive runs or is installed.
func checkBootstrap(t *testing.T, repo string, r built) {
	script, err := os.ReadFile(filepath.Join(repo, bootstrapScript))
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(repo, bootstrapPage))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(page, []byte("```sh\n"+string(script)+"```\n")) {
		t.Fatalf("%s does not show %s as it is: copy the script into its sh block", bootstrapPage, bootstrapScript)
	}
	emu := awsemu.StartT(t, awsemu.DemoFixture())
	archive := cliArchive(r, "linux", runtime.GOARCH)

	t.Run("installs-and-writes-the-node-config", func(t *testing.T) {
		node := runBootstrap(t, repo, r, http.Dir(r.dir), emu)
		if node.err != nil {
			t.Fatalf("the script failed: %v\n%s", node.err, node.out)
		}
		got, err := os.ReadFile(node.config)
		if err != nil {
			t.Fatalf("no kubeadm configuration: %v\n%s", err, node.out)
		}
		// demo.yaml's IMDS instance: i-0a1b2c3d4e5f60001 in us-east-1a,
		// local hostname ip-10-0-1-10.ec2.internal.
		want, err := kubeadmconfig.Render(kubeadmconfig.Options{
			KubernetesVersion: kubernetesVersion,
			NodeName:          "ip-10-0-1-10.ec2.internal",
			ProviderID:        "aws:///us-east-1a/i-0a1b2c3d4e5f60001",
		})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("the script wrote:\n%s\nwant what install kubeadm renders for the instance:\n%s", got, want)
		}
		if out := run(t, "", nil, node.installed, "version"); !strings.Contains(out, r.version) {
			t.Errorf("installed awsccmctl prints %q, want version %s", out, r.version)
		}
	})

	t.Run("tampered-archive", func(t *testing.T) {
		served := copyRelease(t, r.dir)
		// A valid archive whose awsccmctl, if anything ran it, would
		// leave a mark.
		mark := filepath.Join(t.TempDir(), "ran")
		writeFileT(t, filepath.Join(served, archive), tarGzScript(t, "#!/bin/sh\ntouch "+mark+"\n"))
		node := runBootstrap(t, repo, r, http.Dir(served), emu)
		node.refused(t, "FAILED")
		if _, err := os.Stat(mark); err == nil {
			t.Error("the tampered archive's awsccmctl ran")
		}
	})

	t.Run("archive-not-in-sums", func(t *testing.T) {
		served := copyRelease(t, r.dir)
		sums, err := os.ReadFile(filepath.Join(served, "SHA256SUMS"))
		if err != nil {
			t.Fatal(err)
		}
		var kept []string
		for _, l := range strings.SplitAfter(string(sums), "\n") {
			if !strings.HasSuffix(l, "  "+archive+"\n") {
				kept = append(kept, l)
			}
		}
		writeFileT(t, filepath.Join(served, "SHA256SUMS"), []byte(strings.Join(kept, "")))
		runBootstrap(t, repo, r, http.Dir(served), emu).refused(t, "does not list "+archive)
	})
}

// bootstrapRun is one run of the script on a fresh "node" folder.
type bootstrapRun struct {
	out               string
	err               error
	installed, config string
}

// refused checks the run failed saying want, installed nothing and wrote
// no configuration.
func (b bootstrapRun) refused(t *testing.T, want string) {
	t.Helper()
	if b.err == nil {
		t.Fatalf("the script succeeded:\n%s", b.out)
	}
	if !strings.Contains(b.out, want) {
		t.Errorf("the script's output does not say %q:\n%s", want, b.out)
	}
	for _, p := range []string{b.installed, b.config} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s exists after the script refused", p)
		}
	}
}

// runBootstrap serves files over loopback HTTP and runs the script from
// the docs with sh, pointed at them and at the emulator's IMDS.
func runBootstrap(t *testing.T, repo string, r built, files http.FileSystem, emu *awsemu.Emulator) bootstrapRun {
	t.Helper()
	srv := httptest.NewServer(http.FileServer(files))
	t.Cleanup(srv.Close)
	node := t.TempDir()
	bin := filepath.Join(node, "usr", "local", "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(node, "etc", "kubernetes", "ccm-node.yaml")
	cmd := exec.CommandContext(context.Background(), "sh", filepath.Join(repo, bootstrapScript))
	cmd.Env = append(os.Environ(), emu.IMDSEnv().List()...)
	cmd.Env = append(cmd.Env,
		"AWSCCMCTL_VERSION="+r.version,
		"RELEASE_URL="+srv.URL,
		"INSTALL_DIR="+bin,
		"KUBEADM_CONFIG="+config,
		"KUBERNETES_VERSION="+kubernetesVersion,
	)
	out, err := cmd.CombinedOutput()
	return bootstrapRun{out: string(out), err: err, installed: filepath.Join(bin, "awsccmctl"), config: config}
}

// copyRelease copies the release folder, for a test to change.
func copyRelease(t *testing.T, dir string) string {
	t.Helper()
	out := t.TempDir()
	for _, n := range names(t, dir) {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		writeFileT(t, filepath.Join(out, n), b)
	}
	return out
}

// tarGzScript is an archive holding script as an executable awsccmctl.
func tarGzScript(t *testing.T, script string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	if err := tw.WriteHeader(&tar.Header{Name: "awsccmctl", Mode: 0o755, Size: int64(len(script)), Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write([]byte(script)); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// writeFileT writes b to path or fails the test.
func writeFileT(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
