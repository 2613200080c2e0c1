package kops

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// checkResult is kops-check's output (hack/tools/kops/cmd/kops-check).
type checkResult struct {
	Valid  bool   `json:"valid"`
	Stage  string `json:"stage"`
	Errors []struct {
		Field    string `json:"field"`
		Type     string `json:"type"`
		BadValue string `json:"badValue"`
		Detail   string `json:"detail"`
	} `json:"errors"`
	Stages    []string `json:"stages"`
	Populated struct {
		KubeAPIServer         cloudProviderOf `json:"kubeAPIServer"`
		KubeControllerManager struct {
			CloudProvider         string `json:"cloudProvider"`
			EnableLeaderMigration *bool  `json:"enableLeaderMigration"`
		} `json:"kubeControllerManager"`
		Kubelet                cloudProviderOf `json:"kubelet"`
		ControlPlaneKubelet    cloudProviderOf `json:"controlPlaneKubelet"`
		CloudControllerManager *struct {
			Image                 string `json:"image"`
			EnableLeaderMigration *bool  `json:"enableLeaderMigration"`
			ConfigureCloudRoutes  *bool  `json:"configureCloudRoutes"`
			ClusterCIDR           string `json:"clusterCIDR"`
		} `json:"cloudControllerManager"`
	} `json:"populated"`
	Addon struct {
		Image string   `json:"image"`
		Args  []string `json:"args"`
	} `json:"addon"`
	// exitCode and stderr are the run's, not the JSON's.
	exitCode int
	stderr   string
}

type cloudProviderOf struct {
	CloudProvider string `json:"cloudProvider"`
}

// kopsCheck runs kops-check on the spec file with the --set values, and
// fails the test when it does not answer with its JSON (exit 0 or 1).
func kopsCheck(t *testing.T, bin, spec string, sets []string) checkResult {
	t.Helper()
	path := spec
	if !filepath.IsAbs(path) {
		path = filepath.Join("testdata", spec)
	}
	args := []string{"-f", path}
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	cmd := exec.CommandContext(t.Context(), bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var res checkResult
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit) && exit.ExitCode() == 1:
		res.exitCode = 1
	default:
		t.Fatalf("kops-check %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	res.stderr = stderr.String()
	exitCode := res.exitCode
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("kops-check %s: output is not its JSON: %v\n%s\n%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	res.exitCode, res.stderr = exitCode, stderr.String()
	if res.Valid != (exitCode == 0) {
		t.Fatalf("kops-check exited %d with valid=%v", exitCode, res.Valid)
	}
	return res
}

// setValues returns the --set values of a kops command, as kops' flag
// parser reads them (--set=v or --set v).
func setValues(cmd string) []string {
	var out []string
	f := strings.Fields(cmd)
	for i := 0; i < len(f); i++ {
		switch {
		case strings.HasPrefix(f[i], "--set="):
			out = append(out, strings.TrimPrefix(f[i], "--set="))
		case f[i] == "--set" && i+1 < len(f):
			i++
			out = append(out, f[i])
		}
	}
	return out
}

// flagValue returns --name's value in a kops command.
func flagValue(cmd, name string) string {
	f := strings.Fields(cmd)
	for i, w := range f {
		if v, ok := strings.CutPrefix(w, "--"+name+"="); ok {
			return v
		}
		if w == "--"+name && i+1 < len(f) {
			return f[i+1]
		}
	}
	return ""
}

func without(sets []string, drop string) []string {
	return slices.DeleteFunc(slices.Clone(sets), func(s string) bool { return strings.HasPrefix(s, drop+"=") })
}

func readSpec(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
