package ccmapp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRouteControllerNeedsClusterCIDR runs the command as the binary
// would: with the route controller enabled (--configure-cloud-routes
// defaults to true, --controllers to all) and no --cluster-cidr it stops
// at start with an error naming both flags, before any AWS call; any
// other combination gets past that check (to the cloud config, which is
// deliberately broken here so the provider stops next).
func TestRouteControllerNeedsClusterCIDR(t *testing.T) {
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`), 0o600); err != nil {
		t.Fatal(err)
	}
	cloudConfig := filepath.Join(dir, "cloud.conf")
	if err := os.WriteFile(cloudConfig, []byte("[Global]\nNoSuchKey = 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const routesErr = "--configure-cloud-routes is true (its default) and the route controller is enabled, but --cluster-cidr is empty"
	const configErr = `unknown key "NoSuchKey"`
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"defaults", nil, routesErr},
		{"route controller named", []string{"--controllers=route,cloud-node"}, routesErr},
		{"routes explicitly on", []string{"--configure-cloud-routes=true"}, routesErr},
		{"routes off", []string{"--configure-cloud-routes=false"}, configErr},
		{"route controller disabled", []string{"--controllers=*,-route"}, configErr},
		{"route controller not listed", []string{"--controllers=cloud-node,cloud-node-lifecycle"}, configErr},
		{"cluster CIDR given", []string{"--cluster-cidr=10.244.0.0/16"}, configErr},
		{"bad cluster CIDR", []string{"--cluster-cidr=10.244.0.0"}, `--cluster-cidr="10.244.0.0": "10.244.0.0" is not a CIDR`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			args := append([]string{"--kubeconfig=" + kubeconfig, "--cloud-config=" + cloudConfig, "--secure-port=0", "--leader-elect=false"}, tc.args...)
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), runArgsEnv+"="+strings.Join(args, "\n"))
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 {
				t.Fatalf("the command ended with %v, want exit status 1; output:\n%s", err, out)
			}
			if !strings.Contains(string(out), "cannot start the AWS cloud provider:\n") || !strings.Contains(string(out), tc.want) {
				t.Fatalf("output:\n%s\nwant the start error to say %q", out, tc.want)
			}
			if tc.want == routesErr {
				for _, w := range []string{"--configure-cloud-routes=false", "--cluster-cidr=<the pod CIDRs", "docs/routes.md"} {
					if !strings.Contains(string(out), w) {
						t.Errorf("start error does not name the fix %q:\n%s", w, out)
					}
				}
			}
		})
	}
}

// TestCloudConfigProblemsComeFirst: with a --cloud-config file that is
// missing or broken and no --cluster-cidr, the start error reports the
// file first and the route flags too, so the operator fixes both in one go
// instead of learning about the file after fixing the flags.
func TestCloudConfigProblemsComeFirst(t *testing.T) {
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`), 0o600); err != nil {
		t.Fatal(err)
	}
	unreadable := filepath.Join(dir, "unreadable.conf")
	if err := os.Mkdir(unreadable, 0o700); err != nil { // a directory: read fails
		t.Fatal(err)
	}
	broken := filepath.Join(dir, "broken.conf")
	if err := os.WriteFile(broken, []byte("[Global]\nNoSuchKey = 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const routesErr = "--cluster-cidr is empty"
	for _, tc := range []struct {
		name, path, want string
	}{
		{"missing", filepath.Join(dir, "missing.conf"), "missing.conf: no such file or directory"},
		{"unreadable", unreadable, "unreadable.conf: is a directory"},
		{"broken", broken, `unknown key "NoSuchKey"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			args := []string{"--kubeconfig=" + kubeconfig, "--cloud-config=" + tc.path, "--secure-port=0", "--leader-elect=false"}
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), runArgsEnv+"="+strings.Join(args, "\n"))
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 {
				t.Fatalf("the command ended with %v, want exit status 1; output:\n%s", err, out)
			}
			config, routes := strings.Index(string(out), tc.want), strings.Index(string(out), routesErr)
			if config < 0 || routes < 0 || config > routes {
				t.Fatalf("output:\n%s\nwant the start error to say %q, then %q", out, tc.want, routesErr)
			}
		})
	}
}

// runArgsEnv carries the arguments the child process runs the command with,
// one per line: the command applies process-wide logging settings once, so
// each run needs a process of its own.
const runArgsEnv = "CCMAPP_TEST_RUN_ARGS"

// TestMain runs the command instead of the tests in the child processes
// of TestRouteControllerNeedsClusterCIDR: as the binary runs it, with the
// default OnCloudError (print, exit 1).
func TestMain(m *testing.M) {
	args, ok := os.LookupEnv(runArgsEnv)
	if !ok {
		os.Exit(m.Run())
	}
	cmd, err := NewCommand(Options{})
	if err == nil {
		cmd.SetArgs(strings.Split(args, "\n"))
		err = cmd.Execute()
	}
	fmt.Fprintf(os.Stderr, "command returned: %v\n", err)
	os.Exit(2)
}
