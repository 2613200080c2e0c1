// Package realkubelet runs the real kubelet of testbed.LegacyVersion
// (v1.26.13, the last with the in-tree AWS cloud provider) as test bed
// nodes: what a stand-in cannot show (the addresses it sets from IMDS, the
// labels and providerID it sets only when it creates its Node, the
// uninitialized taint, the kubernetes.io/hostname label it rewrites at
// every start) comes from the kubelet's own code. hack/build-testbed.sh
// builds it and its container runtime, a fake CRI endpoint (fakecri from
// hack/tools/k8s126), into testbed.BinDir()/v1.26.13/.
//
// # One node
//
// Start runs one node: a fakecri process and a kubelet. The kubelet runs
// in a mount and UTS namespace of its own (unshare --mount --uts, so root
// is needed), where
//   - the host name is the node's OS host name (an EC2-style
//     "ip-10-0-1-10", so the in-tree kubelet's hostname label differs from
//     its Node name, the private DNS name, as on Ubuntu);
//   - <root>/var/lib and <root>/var/log are bind-mounted over /var/lib and
//     /var/log: the kubelet writes to /var/lib/kubelet (device-plugin
//     sockets) and /var/log/pods whatever --root-dir says, and several
//     kubelets on one host must not share them;
//   - <root>/etc is laid read-only over the host's /etc (overlayfs), so
//     /etc/kubernetes/kubelet.conf and cloud.conf are the node's.
//
// Each node gets its own credentials (system:node:<name>), ports (kubelet
// API, healthz; the read-only port is off) and cloud config. The in-tree
// provider's cloud config must not be the kube-controller-manager's: with
// a VPC, subnet and cluster tag configured, the v1.26 provider takes the
// branch meant for masters without IMDS and names the Node "master-dummy"
// (see InTreeCloudConfig). IMDS must answer as the node's own instance:
// one listener per instance (awsemu's IMDSFor) in the AWS environment.
//
// # Laid out like a kubeadm node
//
// The root holds what kubeadm and the kubelet package install:
// /lib/systemd/system/kubelet.service,
// /etc/systemd/system/kubelet.service.d/10-kubeadm.conf (ExecStart from
// $KUBELET_KUBECONFIG_ARGS $KUBELET_CONFIG_ARGS $KUBELET_KUBEADM_ARGS
// $KUBELET_EXTRA_ARGS), /var/lib/kubelet/kubeadm-flags.env (the cloud
// provider and the CRI endpoint), /etc/default/kubelet,
// /var/lib/kubelet/config.yaml (ports, cgroup settings), and
// /etc/kubernetes/{kubelet.conf,cloud.conf,pki/ca.crt}. The kubelet's
// command line is built from those files at every start as systemd builds
// it, so `awsccmctl migrate-from-intree node --root <root>` edits what
// the next start runs.
//
// # Restarts: a per-node systemctl
//
// Node.Systemctl is a program named systemctl in a folder of its own (put
// Node.SystemctlDir first in PATH): `restart kubelet.service` stops the
// node's kubelet (SIGTERM, then SIGKILL after a grace) and starts a new
// one from the edited files, in the same kind of namespaces; start, stop,
// is-active and daemon-reload (a no-op: the files are read at each start)
// work too, and every call is logged. The script asks the test process
// over a FIFO, so every kubelet stays a child of the test process and dies
// with it.
//
// # Where it runs
//
// Start skips the test under -short, when the host cannot run it (not
// root, no unshare, no overlayfs), and, unless $CI is set (then it fails),
// when the binaries are missing.
package realkubelet
