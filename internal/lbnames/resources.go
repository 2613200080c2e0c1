package lbnames

import (
	"crypto/sha1" //nolint:gosec // G505: upstream's target group name hash, kept for wire compatibility (TargetGroupName); not a security use
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strconv"

	corev1 "k8s.io/api/core/v1"
)

// Names of the AWS resources the CCM creates for a Service next to its load
// balancer. They are computed exactly as upstream kubernetes/cloud-provider-aws
// (and the in-tree provider) compute them and MUST NOT change: a name is how
// an existing security group or target group is found again and adopted, by
// this CCM and by upstream; a changed name orphans the old resource and
// creates a second one.

// ClassicSecurityGroupPrefix + the load balancer name is the Classic load
// balancer's own security group (upstream's "k8s-elb-" + loadBalancerName).
const ClassicSecurityGroupPrefix = "k8s-elb-"

// ClassicSecurityGroupName is the Classic load balancer lbName's own
// security group.
func ClassicSecurityGroupName(lbName string) string { return ClassicSecurityGroupPrefix + lbName }

// notAlnum is what upstream strips from namespace and name before putting
// them in a resource name.
var notAlnum = regexp.MustCompile("[^[:alnum:]]")

// hashedName is upstream's k8s-<namespace:8>-<name:8>-<hash:10>.
func hashedName(svc *corev1.Service, hexSum string) string {
	return fmt.Sprintf("k8s-%.8s-%.8s-%.10s", notAlnum.ReplaceAllString(svc.Namespace, ""), notAlnum.ReplaceAllString(svc.Name, ""), hexSum)
}

// NLBSecurityGroupName is upstream's name of an NLB's managed security
// group (GetSecurityGroupNameForNLB): k8s-<namespace:8>-<name:8>-<sha256:10>,
// the hash over the cluster name (--cluster-name, not the cluster ID), the
// Service's name, namespace and UID.
func NLBSecurityGroupName(clusterName string, svc *corev1.Service) string {
	h := sha256.New()
	for _, s := range []string{clusterName, svc.Name, svc.Namespace, string(svc.UID)} {
		h.Write([]byte(s))
	}
	return hashedName(svc, hex.EncodeToString(h.Sum(nil)))
}

// TargetGroupInputs are the settings of one NLB listener that name its
// target group: those a target group cannot change, as upstream saw it.
type TargetGroupInputs struct {
	// Port is the listener's port, NodePort the Service node port the
	// targets receive on.
	Port, NodePort int32
	// TargetProtocol is the target group's protocol (TCP, TLS, UDP...).
	TargetProtocol string
	// HealthCheckProtocol and HealthCheckInterval (seconds) are the
	// target group's health check.
	HealthCheckProtocol string
	HealthCheckInterval int32
}

// targetTypeInstance is the target type upstream hashes into the name;
// this CCM registers instances only.
const targetTypeInstance = "instance"

// TargetGroupName is upstream's name for the target group of one NLB
// listener: k8s-<namespace:8>-<name:8>-<sha1:10>, the hash over the
// cluster ID, the Service's namespace and name, the ports, target
// protocol, target type and health-check protocol and interval.
func TargetGroupName(clusterID string, svc *corev1.Service, in TargetGroupInputs) string {
	h := sha1.New() //nolint:gosec // G401: the names must equal upstream's, which hash with sha1; not a security use
	for _, s := range []string{clusterID, svc.Namespace, svc.Name, strconv.Itoa(int(in.Port)), strconv.Itoa(int(in.NodePort)),
		in.TargetProtocol, targetTypeInstance, in.HealthCheckProtocol, strconv.Itoa(int(in.HealthCheckInterval))} {
		h.Write([]byte(s))
	}
	return hashedName(svc, hex.EncodeToString(h.Sum(nil)))
}
