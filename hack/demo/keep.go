package main

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// nodeRoot is the file layout of a kubeadm worker whose kubelet runs with
// --cloud-provider=external: what `awsccmctl preflight --node --root` reads
// in the tutorial, standing in for a real node's /.
//
//go:embed noderoot
var nodeRoot embed.FS

// Files the kept demo writes into its state folder; hack/demo.sh and
// docs/getting-started.md name them too.
const (
	// ccmLease is the leader Lease of the CCM (kube-system, its default
	// --leader-elect-resource-name).
	ccmLease    = "cloud-controller-manager"
	envFile     = "env.sh"
	nodeRootDir = "node-root"
)

// keepRunning leaves etcd, kube-apiserver and the emulator running for the
// tutorial until ctx ends (SIGINT, or SIGTERM from `hack/demo.sh down`).
// The demo's own CCM is stopped first: the tutorial starts one of its own,
// and two CCMs without leader election would both write the Nodes.
func (d *demo) keepRunning(ctx context.Context) error {
	if err := d.ccm.Stop(5 * time.Second); err != nil {
		return fmt.Errorf("stop the demo's CCM: %w", err)
	}
	// The stopped CCM's leader Lease stays held for its lease duration;
	// the tutorial's preflight, run seconds later, would report it as
	// another CCM running. The demo owns this cluster: remove it.
	err := d.kube.CoordinationV1().Leases(metav1.NamespaceSystem).Delete(ctx, ccmLease, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("remove the demo CCM's leader Lease: %w", err)
	}
	if err := d.writeNodeRoot(); err != nil {
		return err
	}
	// env.sh is written last: hack/demo.sh up waits for it as the sign that
	// everything is ready.
	if err := d.writeEnv(); err != nil {
		return err
	}
	step("left running: etcd, kube-apiserver (%s) and the AWS emulator (%s); the demo's CCM is stopped", d.cp.Config.Host, d.emuURL)
	step("use them with:  . %s", filepath.Join(d.opts.stateDir, envFile))
	step("stop them with: make demo-down (or Ctrl-C here)")
	<-ctx.Done()
	step("stopping")
	return nil
}

// writeEnv writes a shell file that points kubeconfig users and AWS SDK
// users at the kept control plane and emulator: awsemu's environment for
// SDKs on an EC2 instance, so IMDS is served by the emulator, which answers
// as the fixture's imdsInstanceId, and node-mode preflight finds its region
// and instance the way it does on EC2. Variables that environment clears
// (a profile, a session token of real credentials) are unset.
func (d *demo) writeEnv() error {
	env := awsemu.IMDSEnvFor(d.emuURL)
	env["AWS_REGION"] = d.fixture.Region
	env["KUBECONFIG"] = d.cp.KubeconfigPath
	var b strings.Builder
	fmt.Fprintf(&b, "# Written by the demo (hack/demo.sh up): the kept control plane and AWS emulator.\n")
	fmt.Fprintf(&b, "# Source it: . %s\n", filepath.Join(d.opts.stateDir, envFile))
	for _, name := range slices.Sorted(maps.Keys(env)) {
		if env[name] == "" {
			fmt.Fprintf(&b, "unset %s\n", name)
		} else {
			fmt.Fprintf(&b, "export %s=%s\n", name, shellQuote(env[name]))
		}
	}
	path := filepath.Join(d.opts.stateDir, envFile)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(b.String()), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// writeNodeRoot copies the embedded node layout into the state folder.
func (d *demo) writeNodeRoot() error {
	dst := filepath.Join(d.opts.stateDir, nodeRootDir)
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	if err := os.CopyFS(dst, mustSub(nodeRoot, "noderoot")); err != nil {
		return fmt.Errorf("write the tutorial's node root: %w", err)
	}
	// An empty folder cannot be embedded; kubelet's static Pod path is
	// part of a real worker's layout.
	return os.MkdirAll(filepath.Join(dst, "etc/kubernetes/manifests"), 0o755)
}

func mustSub(f fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(f, dir)
	if err != nil {
		panic(err) // dir is a constant embedded above
	}
	return sub
}

// shellQuote quotes s for POSIX sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
