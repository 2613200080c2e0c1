package awschecks

// checkDoc is a check's reference text: what it means, how to fix it.
type checkDoc struct{ description, fix string }

// checkDocs holds the reference text of every AWS check, by ID.
// hack/gen-docs writes them to docs/reference/preflight-checks.md.
var checkDocs = map[string]checkDoc{
	IDIdentity: {
		description: "preflight's own AWS credentials work (STS GetCallerIdentity). Every other AWS check needs them and is skipped " +
			"without; when STS does not answer at all the run exits 3 (cannot reach). With the region unknown every AWS check is skipped instead.",
		fix: "Give awsccmctl credentials (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or an instance profile with IMDS " +
			"reachable) allowed iam/preflight-policy.json; `aws sts get-caller-identity` must succeed.",
	},
	IDClusterID: {
		description: "The cluster ID (KubernetesClusterID in the cloud config, else the kubernetes.io/cluster/<id> or KubernetesCluster " +
			"tag of the instances) is known and the same everywhere: the CCM uses it to find and tag the subnets, security groups, route tables and load balancers it owns.",
		fix: "Set KubernetesClusterID = <id> in the cloud config's [Global] section and tag every instance " +
			"kubernetes.io/cluster/<id>=owned (or shared), e.g. `aws ec2 create-tags`.",
	},
	IDInstancesExist: {
		description: "Every Node's instance (from its providerID) exists and is not terminated: the CCM's node lifecycle controller " +
			"deletes the Node of an instance that is gone.",
		fix: "Delete the Nodes of terminated instances (`kubectl delete node <name>`) or correct their providerID before installing the CCM.",
	},
	IDNodeNames: {
		description: "Nodes without a providerID are found by the CCM by name: the Node name must be an instance's private DNS name " +
			"or instance ID, or the CCM cannot initialise it.",
		fix: "Start these kubelets with --provider-id=aws:///<zone>/<instance-id>, or with --hostname-override set to the instance's " +
			"private DNS name; a Node keeps the name and providerID it registered with, so re-register it after the change.",
	},
	IDSubnetsTagged: {
		description: "For each zone with cluster instances, a subnet the CCM can put load balancers in: tagged for the cluster " +
			"(kubernetes.io/cluster/<id>) and with kubernetes.io/role/elb (internet-facing) or kubernetes.io/role/internal-elb (internal).",
		fix: "Tag one subnet per zone: `aws ec2 create-tags --resources <subnet> --tags Key=kubernetes.io/cluster/<id>,Value=shared " +
			"Key=kubernetes.io/role/elb,Value=1`.",
	},
	IDSecurityGroups: {
		description: "Each instance has exactly one security group tagged for the cluster: the CCM opens load-balancer traffic to " +
			"the instances in that group, and with none or several it cannot choose.",
		fix: "Tag exactly one of each instance's security groups kubernetes.io/cluster/<id>=owned, and remove the tag from the others.",
	},
	IDRouteTables: {
		description: "When the CCM configures cloud routes, its route controller must find the cluster's route table, and preflight looks " +
			"for it with the CCM's own code: RouteTableID in the cloud config (in the cluster's VPC), else exactly one route table in the " +
			"cluster's VPC tagged for the cluster, kubernetes.io/cluster/<id> or KubernetesCluster=<id> (it refuses to choose between several; " +
			"tagged tables of other VPCs do not count). The cluster's VPC is VPC in the cloud config, else the control-plane instances' VPC, " +
			"as the CCM reads it from its own instance. A failure quotes the error the route controller would log on every sync. " +
			"A warning when whether routes are on is unknown (--cloud-routes). In cluster mode, a warning when the routes the table will hold " +
			"(one per Node pod CIDR, plus the other routes already in it) come within 10 of EC2's default quota of 50 routes per route table, or pass it.",
		fix: "Tag the cluster's route table kubernetes.io/cluster/<id>=owned and no other in the cluster's VPC (or set RouteTableID in the cloud config), or run the CCM " +
			"with --configure-cloud-routes=false if the CNI needs no VPC routes. Near the quota, raise \"Routes per route table\" " +
			"(Service Quotas vpc L-93826ACB, at most 1,000).",
	},
	IDIMDS: {
		description: "The CCM reads its region and instance from IMDS on the control-plane instances: IMDSv2 needs a hop limit of 2 " +
			"when the CCM runs in a Pod network namespace rather than hostNetwork, and an enabled metadata endpoint.",
		fix: "`aws ec2 modify-instance-metadata-options --instance-id <id> --http-endpoint enabled --http-put-response-hop-limit 2`, " +
			"or run the CCM with hostNetwork: true (the rendered install does).",
	},
	IDIAMPermissions: {
		description: "IAM simulates every action the CCM calls for the principal the CCM will run as (the control-plane instances' " +
			"role, else preflight's caller), with the cluster's resource tag in the context so tag conditions are evaluated.",
		fix: "Attach iam/ccm-policy.json (`awsccmctl install iam`) to the CCM's role, and narrow any Deny statement or permissions " +
			"boundary that blocks one of its actions.",
	},
	IDLoadBalancers: {
		description: "What the CCM will do with the existing Classic and Network load balancers of the cluster's LoadBalancer " +
			"Services (named as the in-tree provider named them): adopt them, or find one it would fight over, leak or replace.",
		fix: "Follow the fix printed for each load balancer: tag it for the cluster and its Service, or set the Service's type " +
			"annotation to the load balancer it has; docs/load-balancers.md explains adoption.",
	},
}
