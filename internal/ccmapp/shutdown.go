package ccmapp

import (
	"context"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	cloudcontrollerconfig "k8s.io/cloud-provider/app/config"
	"k8s.io/controller-manager/pkg/leadermigration"
	"k8s.io/klog/v2"

	"github.com/awsccmctl/awsccmctl/internal/leaderlease"
)

// The library's leader election runs without a context the CCM can cancel,
// so it never releases its Leases (ReleaseOnCancel): a CCM that stops left
// every candidate waiting a lease duration (15 s) before the cloud loops ran
// again, at every rolling update. The CCM now stops on SIGTERM and clears
// the holder of the Leases it held before it exits, as client-go's release
// does, so the next candidate takes them at its next retry (2 s).

// releaseTimeout bounds the release: the Pod's grace period is 30 s.
const releaseTimeout = 5 * time.Second

// leaderLeases are the Leases the CCM's leader election takes.
type leaderLeases struct {
	client    kubernetes.Interface
	namespace string
	names     []string
}

// leaderLeasesOf returns the Leases of c's leader election: the main one
// and, with leader migration, the migration lease. nil without leader
// election.
func leaderLeasesOf(c *cloudcontrollerconfig.CompletedConfig) *leaderLeases {
	g := c.ComponentConfig.Generic
	if !g.LeaderElection.LeaderElect || c.Client == nil {
		return nil
	}
	l := &leaderLeases{client: c.Client, namespace: g.LeaderElection.ResourceNamespace, names: []string{g.LeaderElection.ResourceName}}
	if leadermigration.Enabled(&g) {
		l.names = append(l.names, g.LeaderMigration.LeaderName)
	}
	return l
}

// release clears the holder of every Lease this process holds. The
// library's identity is <host name>_<random UUID>, and the UUID is not
// exposed; the host name tells this process's Leases apart because two
// CCMs cannot run on one host: both serve the secure port on the host's
// network, and a DaemonSet's rolling update (no surge) starts the new Pod
// only once the old one is gone. The caller releases only after this
// process led (awscloud.Cloud.Led).
func (l *leaderLeases) release() {
	host, err := os.Hostname()
	if err != nil {
		klog.ErrorS(err, "Cannot release the leader Leases: no host name")
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	mine := func(holder string) bool { return strings.HasPrefix(holder, host+"_") }
	for _, name := range l.names {
		holder, err := leaderlease.ReleaseIf(ctx, l.client, l.namespace, name, mine, "aws-cloud-controller-manager")
		switch {
		case err != nil:
			klog.ErrorS(err, "Leader Lease not released; the next leader waits for it to expire", "lease", klog.KRef(l.namespace, name))
		case holder != "":
			klog.InfoS("Released the leader Lease", "lease", klog.KRef(l.namespace, name), "holder", holder)
		}
	}
}

// stopOnSignal closes stop on the first SIGTERM or SIGINT, so the CCM
// stops serving and releases its Leases; a second signal exits at once.
func stopOnSignal(stop chan struct{}) {
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		s := <-signals
		klog.InfoS("Stopping", "signal", s.String())
		close(stop)
		s = <-signals
		klog.InfoS("Exiting at once", "signal", s.String())
		klog.FlushAndExit(klog.ExitFlushTimeout, 1)
	}()
}
