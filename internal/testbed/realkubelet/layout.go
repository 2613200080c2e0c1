package realkubelet

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Node paths of the node's files (under Node.Root), as kubeadm and the
// kubelet package lay them out.
const (
	UnitPath          = "/lib/systemd/system/kubelet.service"
	DropInPath        = "/etc/systemd/system/kubelet.service.d/10-kubeadm.conf"
	KubeadmFlagsPath  = "/var/lib/kubelet/kubeadm-flags.env"
	DefaultsPath      = "/etc/default/kubelet"
	ConfigPath        = "/var/lib/kubelet/config.yaml"
	KubeconfigPath    = "/etc/kubernetes/kubelet.conf"
	CloudConfigPath   = "/etc/kubernetes/cloud.conf"
	ClusterCAPath     = "/etc/kubernetes/pki/ca.crt"
	kubeletBinaryPath = "/usr/bin/kubelet" // ExecStart='s; the real binary runs in its place
)

// InTreeFlags are the in-tree provider's flags in KUBELET_KUBEADM_ARGS,
// the default of Options.KubeadmArgs.
var InTreeFlags = []string{"--cloud-provider=aws", "--cloud-config=" + CloudConfigPath}

// InTreeCloudConfig returns a cloud config for the in-tree provider of a
// kubelet (not of a kube-controller-manager): the cluster's ID and EC2 at
// ec2URL; the zone, instance and addresses come from IMDS. It names no
// VPC, subnet or role: with those and a cluster tag, the v1.26 provider
// takes its branch for masters without IMDS and the kubelet names its
// Node "master-dummy" (legacy-cloud-providers v0.26 aws.go, newAWSCloud).
func InTreeCloudConfig(clusterID, region, ec2URL string) string {
	return fmt.Sprintf(`[Global]
KubernetesClusterID = %s

[ServiceOverride "1"]
Service = ec2
Region = %s
URL = %s
SigningRegion = %s
`, clusterID, region, ec2URL, region)
}

// layout is what the node's files say.
type layout struct {
	criEndpoint  string
	kubeadmArgs  []string
	port, health int
	caPEM        []byte
	cloudConfig  string
	// hostname is /etc/hostname's: the node's OS host name, as the node
	// step reads it under --root.
	hostname string
}

// write writes the node's files under root (the kubeconfig is the
// caller's).
func (l layout) write(root string) error {
	for _, a := range l.kubeadmArgs {
		if strings.ContainsAny(a, "\"\\ \t\n") {
			return fmt.Errorf("kubelet argument %q: quotes, backslashes and white space do not survive KUBELET_KUBEADM_ARGS", a)
		}
	}
	args := append([]string{"--container-runtime-endpoint=" + l.criEndpoint}, l.kubeadmArgs...)
	files := []struct {
		path, data string
	}{
		{UnitPath, `[Unit]
Description=kubelet: The Kubernetes Node Agent

[Service]
ExecStart=` + kubeletBinaryPath + `
Restart=always
RestartSec=10

[Install]
WantedBy=multi-user.target
`},
		// kubeadm's drop-in: the flags from its files, in this order.
		{DropInPath, `[Service]
Environment="KUBELET_KUBECONFIG_ARGS=--kubeconfig=` + KubeconfigPath + `"
Environment="KUBELET_CONFIG_ARGS=--config=` + ConfigPath + `"
EnvironmentFile=-` + KubeadmFlagsPath + `
EnvironmentFile=-` + DefaultsPath + `
ExecStart=
ExecStart=` + kubeletBinaryPath + ` $KUBELET_KUBECONFIG_ARGS $KUBELET_CONFIG_ARGS $KUBELET_KUBEADM_ARGS $KUBELET_EXTRA_ARGS
`},
		{KubeadmFlagsPath, `KUBELET_KUBEADM_ARGS="` + strings.Join(args, " ") + "\"\n"},
		{DefaultsPath, "KUBELET_EXTRA_ARGS=--v=2\n"},
		// Loopback only; no cgroup of its own and no swap check (the host
		// is a test machine); what the kubelet serves on its own port is
		// authorized by the apiserver, as kubeadm configures it.
		{ConfigPath, `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: ` + strconv.Itoa(l.port) + `
healthzBindAddress: 127.0.0.1
healthzPort: ` + strconv.Itoa(l.health) + `
readOnlyPort: 0
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
  x509:
    clientCAFile: ` + ClusterCAPath + `
authorization:
  mode: Webhook
cgroupDriver: cgroupfs
cgroupsPerQOS: false
enforceNodeAllocatable: []
failSwapOn: false
resolvConf: /etc/resolv.conf
`},
		{ClusterCAPath, string(l.caPEM)},
		{CloudConfigPath, l.cloudConfig},
		{"/etc/hostname", l.hostname + "\n"},
	}
	for _, f := range files {
		p := filepath.Join(root, f.path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(f.data), 0o644); err != nil {
			return err
		}
	}
	// The folders the kubelet's mounts need: /var/lib and /var/log of the
	// node replace the host's.
	for _, d := range []string{"/var/log", "/var/lib/kubelet"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			return err
		}
	}
	return nil
}
