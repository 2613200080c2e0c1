package installcmd_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
	"github.com/awsccmctl/awsccmctl/internal/install"
)

// TestManifestsECRCredentialProvider: --ecr-credential-provider (or the
// file's ecrCredentialProvider) adds the DaemonSet install.Render renders,
// with the host directory of --ecr-credential-provider-bin-dir; a bad
// directory is a usage error naming the flag.
func TestManifestsECRCredentialProvider(t *testing.T) {
	out, _, err := run(t, "install", "manifests", "--image", "registry.example.com/ccm:v1", "--ecr-credential-provider", "--ecr-credential-provider-bin-dir", "/opt/credential-providers")
	if err != nil {
		t.Fatal(err)
	}
	v := install.Values{Image: "registry.example.com/ccm:v1", ECRCredentialProvider: true, ECRCredentialProviderBinDir: "/opt/credential-providers"}
	v.Default()
	want, err := install.Render(v)
	if err != nil {
		t.Fatal(err)
	}
	if out != string(want) || !strings.Contains(out, "name: \"ecr-credential-provider\"") || !strings.Contains(out, "path: \"/opt/credential-providers\"") {
		t.Errorf("stdout differs from install.Render with the DaemonSet:\n%s", out)
	}

	out = manifestsWithConfig(t, "ecrCredentialProvider: true")
	if !strings.Contains(out, "path: \"/usr/libexec/kubernetes/kubelet-plugins/credential-provider/exec\"") {
		t.Errorf("the file's ecrCredentialProvider did not render the DaemonSet with the default directory:\n%s", out)
	}

	_, _, err = run(t, "install", "manifests", "--ecr-credential-provider", "--ecr-credential-provider-bin-dir", "opt/x")
	if exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), `--ecr-credential-provider-bin-dir`) || !strings.Contains(err.Error(), `"opt/x": want the kubelet's --image-credential-provider-bin-dir`) {
		t.Errorf("relative directory: %v", err)
	}
}

// manifestsWithConfig runs install manifests with an InstallConfiguration
// file holding fields (YAML lines) and returns its stdout.
func manifestsWithConfig(t *testing.T, fields string) string {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "install.yaml")
	if err := os.WriteFile(cfg, []byte("apiVersion: "+install.ConfigAPIVersion+"\nkind: "+install.ConfigKind+"\n"+fields+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, err := run(t, "install", "manifests", "--config", cfg)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
