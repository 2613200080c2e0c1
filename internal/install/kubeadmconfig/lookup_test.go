package kubeadmconfig

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// TestLocalKubeadmVersion runs a stand-in kubeadm from PATH.
func TestLocalKubeadmVersion(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PATH", dir)
	if _, err := LocalKubeadmVersion(t.Context()); !errors.Is(err, ErrNoKubeadm) {
		t.Fatalf("without kubeadm: %v, want ErrNoKubeadm", err)
	}
	script := "#!/bin/sh\n[ \"$*\" = 'version -o short' ] || { echo \"bad args: $*\" >&2; exit 1; }\necho v1.31.3\n"
	if err := os.WriteFile(filepath.Join(dir, "kubeadm"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	v, err := LocalKubeadmVersion(t.Context())
	if err != nil || v != "v1.31.3" {
		t.Fatalf("version %q, err %v", v, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "kubeadm"), []byte("#!/bin/sh\necho broken >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := LocalKubeadmVersion(t.Context()); err == nil || errors.Is(err, ErrNoKubeadm) {
		t.Fatalf("failing kubeadm: %v, want its error", err)
	}
}

// imdsEnv points the SDK's IMDS client at url, with no local AWS config.
func imdsEnv(t *testing.T, url string) {
	t.Helper()
	for k, v := range map[string]string{
		"AWS_EC2_METADATA_SERVICE_ENDPOINT": url, "AWS_EC2_METADATA_DISABLED": "false",
		"AWS_CONFIG_FILE": os.DevNull, "AWS_SHARED_CREDENTIALS_FILE": os.DevNull,
	} {
		t.Setenv(k, v)
	}
}

// TestReadNodeIdentity reads the demo fixture's instance from the
// emulator's IMDSv2, as a bootstrap script on that instance would.
func TestReadNodeIdentity(t *testing.T) {
	e := awsemu.StartT(t, awsemu.DemoFixture())
	imdsEnv(t, e.URL)
	// demo.yaml: imdsInstanceId i-0a1b2c3d4e5f60001 in subnet-0demo00000000000a
	// (us-east-1a), private IP 10.0.1.10.
	n, err := ReadNodeIdentity(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := NodeIdentity{InstanceID: "i-0a1b2c3d4e5f60001", AvailabilityZone: "us-east-1a", LocalHostname: "ip-10-0-1-10.ec2.internal"}
	if n != want {
		t.Errorf("identity %+v, want %+v", n, want)
	}
	if got := n.ProviderID(); got != "aws:///us-east-1a/i-0a1b2c3d4e5f60001" {
		t.Errorf("ProviderID %q", got)
	}
}
