package root

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
)

// closedPortKubeconfig writes a kubeconfig whose server is a loopback port
// nothing listens on.
func closedPortKubeconfig(t *testing.T) string {
	t.Helper()
	l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["c"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:" + strconv.Itoa(port), InsecureSkipTLSVerify: true}
	cfg.AuthInfos["u"] = &clientcmdapi.AuthInfo{Token: "t"}
	cfg.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	cfg.CurrentContext = "c"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestMissingKubeconfig: KUBECONFIG=/nonexistent gives the same message and
// exit code (2) as --kubeconfig /nonexistent on every command with
// kubectl's flags; client-go skipped the missing file and the command
// failed later, at http://localhost:8080, with exit 3.
func TestMissingKubeconfig(t *testing.T) {
	n := 0
	for _, c := range commands(t) {
		if c.Flags().Lookup("kubeconfig") == nil || c.Flags().Lookup("context") == nil {
			continue
		}
		n++
		t.Run(commandPath(c), func(t *testing.T) {
			t.Setenv("KUBECONFIG", "")
			_, _, flagErr := runAll(t, append(argv(c), "--kubeconfig", "/nonexistent")...)
			t.Setenv("KUBECONFIG", "/nonexistent")
			_, _, envErr := runAll(t, argv(c)...)
			for name, err := range map[string]error{"--kubeconfig": flagErr, "KUBECONFIG": envErr} {
				if exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), "/nonexistent (from "+name+"): no such file") {
					t.Errorf("%s /nonexistent: exit %d, %v", name, exitcode.Of(err), err)
				}
			}
			if flagErr != nil && envErr != nil && strings.Replace(flagErr.Error(), "--kubeconfig", "KUBECONFIG", 1) != envErr.Error() {
				t.Errorf("different messages:\n--kubeconfig: %v\nKUBECONFIG:   %v", flagErr, envErr)
			}
		})
	}
	if n < 5 {
		t.Errorf("%d commands with kubectl's flags, want at least 5 (preflight, install apply/uninstall, migrate ...)", n)
	}

	t.Run("a list where one file exists is kubectl's merge", func(t *testing.T) {
		t.Setenv("KUBECONFIG", "/nonexistent"+string(filepath.ListSeparator)+closedPortKubeconfig(t))
		_, _, err := runAll(t, "migrate-from-intree", "status")
		if exitcode.Of(err) != exitcode.Unreachable {
			t.Errorf("exit %d (%v), want %d: the existing file's cluster is down", exitcode.Of(err), err, exitcode.Unreachable)
		}
	})
	t.Run("a list where none exists", func(t *testing.T) {
		t.Setenv("KUBECONFIG", "/nonexistent"+string(filepath.ListSeparator)+"/nonexistent2")
		_, _, err := runAll(t, "preflight")
		if exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), "none of the files exists") {
			t.Errorf("exit %d, %v", exitcode.Of(err), err)
		}
	})
}

// TestNodeMissingKubeconfig: migrate-from-intree node refuses a missing
// --kubeconfig before it edits the node's files (it found out only when
// reporting, after the edit), and ignores KUBECONFIG, which it never reads.
func TestNodeMissingKubeconfig(t *testing.T) {
	root := copyTree(t, filepath.Join("..", "..", "migrate", "nodephase", "testdata", "kubeadm-node"))
	flags := filepath.Join(root, "var", "lib", "kubelet", "kubeadm-flags.env")
	before, err := os.ReadFile(flags)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = runAll(t, "migrate-from-intree", "node", "--root", root, "--phase", "kubelet-external", "--kubeconfig", "/nonexistent")
	if exitcode.Of(err) != exitcode.Usage {
		t.Errorf("exit %d (%v), want %d", exitcode.Of(err), err, exitcode.Usage)
	}
	if after, _ := os.ReadFile(flags); string(after) != string(before) {
		t.Error("node edited the kubelet's flags before refusing --kubeconfig")
	}
	t.Setenv("KUBECONFIG", "/nonexistent")
	if _, _, err := runAll(t, "migrate-from-intree", "node", "--root", root, "--phase", "kubelet-external", "--dry-run"); err != nil {
		t.Errorf("node --dry-run with KUBECONFIG=/nonexistent: %v", err)
	}
}
