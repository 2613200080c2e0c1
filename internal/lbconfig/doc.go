// Package lbconfig turns a Service of type LoadBalancer into the desired
// configuration of its AWS load balancer (Classic ELB or NLB), parsed and
// validated without calling AWS.
//
// It holds the registry of every service.beta.kubernetes.io/aws-load-balancer-*
// annotation the CCM reads (Annotations), with the load-balancer types each
// applies to, its syntax, default and meaning; the annotation keys are a wire
// contract with the in-tree provider and kubernetes/cloud-provider-aws and
// MUST NOT change. docs/reference/load-balancer-annotations.md is generated
// from the registry. Names, tag keys and the type classification come from
// internal/lbnames.
//
// # Contract with the reconciler
//
// Parse returns every Problem at once together with a Config for the parts
// that parsed. A Problem names the annotation (or spec field) and the reason,
// and is meant to become a Warning event on the Service. The reconciler must:
//
//   - create or update nothing when a Problem is Blocking (a spec-level rule
//     such as mixed protocols or spec.loadBalancerIP, or a change of the type
//     annotation after creation), as upstream refuses such Services;
//   - otherwise reconcile everything whose annotations are Config.Valid, and
//     leave what an invalid annotation governs exactly as it is in AWS: never
//     delete, reset or default it because of a typo. A bad listener-related
//     annotation (ssl-cert, ssl-ports, backend-protocol,
//     ssl-negotiation-policy) freezes the listeners; bad source ranges freeze
//     the ingress rules (they never fall back to 0.0.0.0/0); a bad health-check
//     annotation freezes the health check; a bad attribute annotation freezes
//     that attribute; bad target-node-labels freeze the target set; on a new
//     load balancer, creation waits until the Problem is fixed.
//
// An annotation set on the other type (extra-security-groups on an NLB,
// target-group-attributes on a Classic ELB, ...) is reported and otherwise
// ignored: it governs nothing on that type.
//
// Health-check defaults follow externalTrafficPolicy (Local: the
// healthCheckNodePort, /healthz; Cluster: the traffic port). The cloud
// config's shared kube-proxy probe mode (ClusterServiceLoadBalancerHealthProbeMode
// = Shared) is not a Service property: the reconciler applies it on top for
// Cluster services without health-check annotations.
//
// Checks that need AWS (EIP allocation and private address counts against
// discovered subnets, subnet names, certificate existence) are left to the
// reconciler; Parse checks what the Service alone can tell.
package lbconfig
