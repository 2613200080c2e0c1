package realkubelet

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writeNodeFiles lays out a node's files under a new root.
func writeNodeFiles(t *testing.T, args []string) string {
	t.Helper()
	root := t.TempDir()
	l := layout{criEndpoint: "unix:///run/cri.sock", kubeadmArgs: args, port: 10250, health: 10248, caPEM: []byte("ca"), cloudConfig: "[Global]\n"}
	if err := l.write(root); err != nil {
		t.Fatal(err)
	}
	return root
}

func writeNodeFile(t *testing.T, root, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(filepath.Join(root, path)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, path), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCommandLineAsSystemdBuildsIt(t *testing.T) {
	root := writeNodeFiles(t, InTreeFlags)
	got, err := commandLine(root)
	want := []string{"/usr/bin/kubelet", "--kubeconfig=/etc/kubernetes/kubelet.conf", "--config=/var/lib/kubelet/config.yaml",
		"--container-runtime-endpoint=unix:///run/cri.sock", "--cloud-provider=aws", "--cloud-config=/etc/kubernetes/cloud.conf", "--v=2"}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("commandLine = %q, %v\nwant %q", got, err, want)
	}

	// Every file counts at the next start: the flags file, a drop-in that
	// sorts later (its Environment= loses to the files' variables), a unit
	// in /etc that hides the package's.
	writeNodeFile(t, root, KubeadmFlagsPath, "# edited\nKUBELET_KUBEADM_ARGS=\"--cloud-provider=external --hostname-override=ip-10-0-1-10.ec2.internal\"\n")
	writeNodeFile(t, root, "/etc/systemd/system/kubelet.service.d/20-extra.conf", "[Service]\nEnvironment=\"KUBELET_EXTRA_ARGS=--lost\" KUBELET_CONFIG_ARGS=--config=/etc/kubelet.yaml\n")
	got, err = commandLine(root)
	want = []string{"/usr/bin/kubelet", "--kubeconfig=/etc/kubernetes/kubelet.conf", "--config=/etc/kubelet.yaml",
		"--cloud-provider=external", "--hostname-override=ip-10-0-1-10.ec2.internal", "--v=2"}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("after the edits commandLine = %q, %v\nwant %q", got, err, want)
	}
	writeNodeFile(t, root, "/etc/systemd/system/kubelet.service", "[Service]\nExecStart=/opt/bin/kubelet ${KUBELET_EXTRA_ARGS}\n")
	writeNodeFile(t, root, "/etc/systemd/system/kubelet.service.d/30-exec.conf", "[Service]\nExecStart=\nExecStart=-/opt/bin/kubelet --a=${KUBELET_EXTRA_ARGS}\n")
	if got, err = commandLine(root); err != nil || !slices.Equal(got, []string{"/opt/bin/kubelet", "--a=--v=2"}) {
		t.Fatalf("with a later ExecStart= commandLine = %q, %v", got, err)
	}
}

func TestCommandLineErrors(t *testing.T) {
	for _, tc := range []struct {
		name, path, data, want string
	}{
		{"required environment file missing", DropInPath, "[Service]\nEnvironmentFile=/etc/missing\nExecStart=/usr/bin/kubelet\n", "/etc/missing"},
		{"unterminated quote", KubeadmFlagsPath, "KUBELET_KUBEADM_ARGS=\"--cloud-provider=aws\n", "unterminated"},
		{"no ExecStart", DropInPath, "[Service]\nExecStart=\n", "no ExecStart="},
		{"not an assignment", DropInPath, "[Service]\nExecStart\n", "not KEY=VALUE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := writeNodeFiles(t, InTreeFlags)
			writeNodeFile(t, root, tc.path, tc.data)
			if _, err := commandLine(root); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("commandLine = %v, want an error with %q", err, tc.want)
			}
		})
	}
	if _, err := commandLine(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no kubelet.service") {
		t.Errorf("commandLine of an empty root = %v", err)
	}
	if err := (layout{kubeadmArgs: []string{"--node-labels=a=b c"}}).write(t.TempDir()); err == nil {
		t.Error("layout.write took an argument with a space")
	}
}
