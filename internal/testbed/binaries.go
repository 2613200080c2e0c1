package testbed

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// EnvBinDir names the environment variable that overrides the binary folder.
const EnvBinDir = "TESTBED_BIN"

// BuildHint tells how to produce the binaries.
const BuildHint = "run hack/build-testbed.sh (or make testbed)"

// Binary names expected in BinDir.
const (
	APIServerBinary = "kube-apiserver"
	EtcdBinary      = "etcd"
	// KubeadmBinary is not part of the control plane: tests use it to
	// validate the kubeadm configuration awsccmctl renders (Tool).
	KubeadmBinary = "kubeadm"
	// KubeControllerManagerBinary is built only for LegacyVersion (Legacy).
	KubeControllerManagerBinary = "kube-controller-manager"
	// KopsCheckBinary is kops v1.31.0's validation and CCM add-on,
	// offline (hack/tools/kops), for test/kops (Tool).
	KopsCheckBinary = "kops-check"
	// ChartCheckBinary is the Helm v3 Go library's render, lint, schema
	// validation and release actions (hack/tools/helm), for test/chart (Tool).
	ChartCheckBinary = "chart-check"
	// PromopCRDsBinary prints prometheus-operator's CRDs
	// (hack/tools/promop), for the monitoring tests (Tool).
	PromopCRDsBinary = "promop-crds"
	// RuleCheckBinary evaluates Prometheus alerting rules over scraped
	// samples with Prometheus' rule engine (hack/tools/prometheus) (Tool).
	RuleCheckBinary = "rule-check"
)

// LegacyVersion is the Kubernetes version of the second, older pair of
// binaries hack/build-testbed.sh builds (hack/tools/k8s126) into
// BinDir()/LegacyVersion/: the last minor whose kube-controller-manager
// still has the in-tree AWS cloud provider, for the in-tree → external
// migration tests. Keep it in step with hack/tools/k8s126/go.mod.
const LegacyVersion = "v1.26.13"

// KubeadmV1beta3Version is the kubeadm hack/build-testbed.sh builds
// (hack/tools/kubeadm135) into BinDir()/KubeadmV1beta3Version/kubeadm: the
// last kubeadm that reads kubeadm.k8s.io/v1beta3 (1.36 removed it), and one
// with `kubeadm config validate` (1.28 added it; LegacyVersion lacks it).
// Keep it in step with hack/tools/kubeadm135/go.mod.
const KubeadmV1beta3Version = "v1.35.4"

// KubeadmV1beta3 returns the path of kubeadm KubeadmV1beta3Version; like
// Tool, it skips the test when it is missing, unless $CI is set.
func KubeadmV1beta3(t testing.TB) string {
	t.Helper()
	return Tool(t, filepath.Join(KubeadmV1beta3Version, KubeadmBinary))
}

// Legacy returns the paths of kube-apiserver and kube-controller-manager
// LegacyVersion. Like Tool, it skips the test when they are missing, unless
// $CI is set: then the test fails. Start a control plane on that apiserver
// with Options.APIServerBinary.
func Legacy(t testing.TB) (apiserver, kcm string) {
	t.Helper()
	apiserver = Tool(t, filepath.Join(LegacyVersion, APIServerBinary))
	kcm = Tool(t, filepath.Join(LegacyVersion, KubeControllerManagerBinary))
	return apiserver, kcm
}

// Tool returns the path of another binary hack/build-testbed.sh builds
// (KubeadmBinary), relative to BinDir (so "v1.26.13/kube-controller-manager"
// names a legacy binary, see Legacy). Like Get, it skips the test when the binaries are
// missing, unless $CI is set: then the test fails.
func Tool(t testing.TB, name string) string {
	t.Helper()
	if testing.Short() {
		t.Skipf("%s", shortReason)
	}
	dir, err := BinDir()
	if err == nil {
		p := filepath.Join(dir, name)
		if st, serr := os.Stat(p); serr != nil || st.IsDir() || st.Mode().Perm()&0o111 == 0 {
			err = &MissingBinariesError{Reason: p + " not found or not executable"}
		} else {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%v (CI is set: the test bed binaries are required)", err)
	}
	t.Skipf("%v", err)
	return ""
}

// MissingBinariesError reports that the test bed binaries are not available.
type MissingBinariesError struct {
	Reason string // e.g. "/repo/_output/testbed/bin/kube-apiserver not found"
}

func (e *MissingBinariesError) Error() string {
	return "testbed: " + e.Reason + "; " + BuildHint
}

// IsMissingBinaries reports whether err says the binaries are missing.
func IsMissingBinaries(err error) bool {
	var m *MissingBinariesError
	return errors.As(err, &m)
}

// BinDir returns the folder holding kube-apiserver and etcd: $TESTBED_BIN if
// set, else <repo root>/_output/testbed/bin, where the repo root is the first
// folder holding a go.mod found by walking up from the working directory (and,
// failing that, from this source file). The error, a *MissingBinariesError
// when a binary is absent, says how to build them.
func BinDir() (string, error) {
	dir := os.Getenv(EnvBinDir)
	if dir == "" {
		root, err := repoRoot()
		if err != nil {
			return "", &MissingBinariesError{Reason: err.Error() + " (set $" + EnvBinDir + ")"}
		}
		dir = filepath.Join(root, "_output", "testbed", "bin")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for _, name := range []string{APIServerBinary, EtcdBinary} {
		p := filepath.Join(abs, name)
		st, err := os.Stat(p)
		switch {
		case err != nil:
			return "", &MissingBinariesError{Reason: p + " not found"}
		case st.IsDir() || st.Mode().Perm()&0o111 == 0:
			return "", &MissingBinariesError{Reason: p + " is not an executable file"}
		}
	}
	return abs, nil
}

func repoRoot() (string, error) {
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		starts = append(starts, filepath.Dir(file))
	}
	for _, d := range starts {
		if root, ok := findUp(d, "go.mod"); ok {
			return root, nil
		}
	}
	return "", fmt.Errorf("no go.mod found above %v", starts)
}

func findUp(dir, name string) (string, bool) {
	for {
		if st, err := os.Stat(filepath.Join(dir, name)); err == nil && !st.IsDir() {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}
