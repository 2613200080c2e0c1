package lbnames

import (
	corev1 "k8s.io/api/core/v1"
	cloudprovider "k8s.io/cloud-provider"
)

// Tag keys on load balancers (and the security groups and target groups
// created for them), next to the cluster tag (package clustertag). They MUST
// NOT change: the in-tree provider and upstream write and read the same ones.
const (
	// ServiceNameTagKey holds the Service a load balancer was created for,
	// as <namespace>/<name>.
	ServiceNameTagKey = "kubernetes.io/service-name"
)

// Service annotation and values choosing the load balancer type. They
// MUST NOT change.
const (
	// TypeAnnotation selects the load balancer type of a Service.
	TypeAnnotation = "service.beta.kubernetes.io/aws-load-balancer-type"
	// TypeNLB asks this CCM for a Network Load Balancer.
	TypeNLB = "nlb"
	// TypeNLBIP and TypeExternal hand the Service to the AWS Load Balancer
	// Controller; this CCM ignores it.
	TypeNLBIP    = "nlb-ip"
	TypeExternal = "external"
)

// LoadBalancerName is the name of the Service's load balancer: "a" and the
// Service UID without dashes, cut to 32 characters (the ELB name limit), as
// computed by k8s.io/cloud-provider for every provider. It is how the CCM
// finds an existing load balancer, so a recreated Service (new UID) gets a
// new one. The value MUST NOT change, or every existing load balancer is
// orphaned and replaced.
func LoadBalancerName(svc *corev1.Service) string {
	return cloudprovider.DefaultLoadBalancerName(svc)
}

// ServiceNameTagValue is the ServiceNameTagKey value for svc: <namespace>/<name>.
func ServiceNameTagValue(svc *corev1.Service) string { return svc.Namespace + "/" + svc.Name }

// LoadBalancerKind says who provides a Service's load balancer.
type LoadBalancerKind string

// Kinds of Services.
const (
	// KindClassic: this CCM provides a Classic Elastic Load Balancer.
	KindClassic LoadBalancerKind = "classic"
	// KindNLB: this CCM provides a Network Load Balancer.
	KindNLB LoadBalancerKind = "nlb"
	// KindNotOurs: not a LoadBalancer Service, or one another controller
	// provides (spec.loadBalancerClass set, or the type annotation nlb-ip or
	// external for the AWS Load Balancer Controller).
	KindNotOurs LoadBalancerKind = "not-ours"
)

// Kind classifies a Service the way the in-tree provider and upstream do:
// the cloud-provider service controller skips Services with a
// loadBalancerClass; the type annotation nlb selects an NLB, nlb-ip and
// external are left to the AWS Load Balancer Controller, and anything else
// (including no annotation) is a Classic ELB. Values are compared exactly.
func Kind(svc *corev1.Service) LoadBalancerKind {
	if svc == nil || svc.Spec.Type != corev1.ServiceTypeLoadBalancer || svc.Spec.LoadBalancerClass != nil {
		return KindNotOurs
	}
	switch svc.Annotations[TypeAnnotation] {
	case TypeNLB:
		return KindNLB
	case TypeNLBIP, TypeExternal:
		return KindNotOurs
	default:
		return KindClassic
	}
}
