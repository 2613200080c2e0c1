package clusterchecks

// checkDoc is a check's reference text: what it means, how to fix it.
type checkDoc struct{ description, fix string }

// checkDocs holds the reference text of the cluster checks, by ID; the
// control-plane rules bring theirs from nodechecks. hack/gen-docs writes
// them to docs/reference/preflight-checks.md.
var checkDocs = map[string]checkDoc{
	IDClusterReachable: {
		description: "The API server of the kubeconfig's current context answers. Every other cluster check reads through it, and " +
			"is skipped when it does not; the run then exits 3 (cannot reach).",
		fix: "Check the kubeconfig, --context and the network: `kubectl version` must answer, then run preflight again.",
	},
	IDClusterVersion: {
		description: "The API server's version fits the mode, as versions-control-plane does in node mode: migrate-from-intree " +
			"applies to control planes up to 1.26, install to control planes that run with an external cloud provider.",
		fix: "Use the mode that fits the cluster (`--mode=pre-migrate` for 1.26 and older with the in-tree provider), or upgrade the control plane first.",
	},
	IDKubeadmDrift: {
		description: "On kubeadm clusters, the ClusterConfiguration in ConfigMap kube-system/kubeadm-config must agree with the " +
			"flags the control-plane mirror Pods run with: `kubeadm upgrade` regenerates the manifests from it and would revert the cloud-provider settings.",
		fix: "Put the values to keep into the ClusterConfiguration (`kubectl -n kube-system edit configmap kubeadm-config`), then " +
			"regenerate each control-plane node's manifests from it with `kubeadm init phase control-plane <component> --config <file>`, one node at a time.",
	},
	IDNodesKubeletSkew: {
		description: "Every Node's kubelet is within the version skew policy of the API server (not newer, at most 3 minors older) " +
			"before the move to the CCM.",
		fix: "Upgrade the kubelets named (or the control plane, when a kubelet is newer) before installing or migrating.",
	},
	IDNodesProviderID: {
		description: "Nodes carry an AWS providerID the CCM can use: aws:///<zone>/<instance-id>, or aws:////<instance-id> without the " +
			"zone. spec.providerID cannot change once set, so a wrong one means re-registering the Node. An error after install, a warning before.",
		fix: "Give each kubelet --provider-id=aws:///$ZONE/$INSTANCE_ID (or providerID in its configuration) before it registers; " +
			"a Node registered with a wrong providerID must be deleted (`kubectl delete node`) and its kubelet restarted.",
	},
	IDNodesUninitialized: {
		description: "No Node has waited long for the node.cloudprovider.kubernetes.io/uninitialized taint to be removed: a kubelet " +
			"with --cloud-provider=external waits for a CCM, and Pods without a toleration do not schedule on its Node meanwhile. An error after install.",
		fix: "Before install: run a CCM (`awsccmctl install` or migrate-from-intree). After: check that the CCM runs (conflicts-ccm-lease) " +
			"and read its log for these Nodes; it must find each instance and be allowed ec2:DescribeInstances.",
	},
	IDNodesCloudMetadata: {
		description: "Nodes the CCM has initialised carry what it sets: topology.kubernetes.io/zone and region, " +
			"node.kubernetes.io/instance-type and the instance's addresses. An error after install.",
		fix: "Read the CCM's log for these Nodes (it must find their instances with ec2:DescribeInstances), and check that no other " +
			"controller removes the labels.",
	},
	IDNodesHostnameLabel: {
		description: "An external kubelet without --hostname-override names itself after its hostname; where a Node's " +
			"kubernetes.io/hostname label differs from its name, the kubelet would register a new Node its certificate does not allow.",
		fix: "Pin --hostname-override=<Node name> on these kubelets before switching them to --cloud-provider=external " +
			"(kops: spec.kubelet.hostnameOverride: '@aws').",
	},
	IDNodesKubeletConfig: {
		description: "Reads each kubelet's live configuration (/configz through the API server, which needs get on nodes/proxy) and " +
			"compares its providerID with the Node's: a kubelet that disagrees with its Node has been reconfigured since it registered.",
		fix: "Set the kubelet's providerID to exactly the Node's spec.providerID; a Node whose providerID must change has to be drained, " +
			"deleted and re-registered. Unreachable kubelets: open their port to the API server, or run `awsccmctl preflight --node` on them.",
	},
	IDConflictsCCMLease: {
		description: "Who holds the kube-system/cloud-controller-manager Lease. Before install, a holder means another CCM already " +
			"runs and would fight the new one (an error); after install, no live holder means the CCM is not running with leader election.",
		fix: "Before install: find and remove the running cloud-controller-manager. After install: check the CCM's Pods and log; it " +
			"must run with --leader-elect=true and may update Leases in kube-system.",
	},
	IDConflictsMigration: {
		description: "A leftover leader-migration Lease (kube-system/cloud-provider-extraction-migration) from an unfinished " +
			"migration makes a controller manager started with leader migration wait on it.",
		fix: "When no controller manager runs with --enable-leader-migration any more, delete it: " +
			"`kubectl -n kube-system delete lease cloud-provider-extraction-migration`.",
	},
	IDConflictsOtherCCMPods: {
		description: "Pods running a cloud-controller-manager image: another CCM next to the AWS one fights it over Nodes, routes and " +
			"load balancers. Before install any CCM Pod is reported; after install only those that are not AWS's.",
		fix: "Remove the other cloud-controller-manager (its Deployment, DaemonSet or static Pod manifest); if it is the AWS CCM you " +
			"installed, run preflight with --mode=post-install.",
	},
	IDStorageEBSCSIDriver: {
		description: "In-tree EBS volumes (kubernetes.io/aws-ebs) work only through CSI migration to the EBS CSI driver since the " +
			"in-tree plugin was removed in 1.27: with such PersistentVolumes, StorageClasses or inline Pod volumes, the driver must be installed.",
		fix: "Install the AWS EBS CSI driver (the aws-ebs-csi-driver add-on or Helm chart) before moving to the CCM.",
	},
	IDStorageEBSCSIMigrated: {
		description: "Every Node hands EBS volumes to the EBS CSI driver: its CSINode lists ebs.csi.aws.com, and with in-tree volumes " +
			"its kubelet has migrated kubernetes.io/aws-ebs (CSIMigrationAWS).",
		fix: "Run the EBS CSI node DaemonSet (ebs-csi-node) on every Node, tolerating their taints; upgrade older kubelets or remove " +
			"CSIMigrationAWS=false from their --feature-gates, then restart them.",
	},
	IDImagesECRProvider: {
		description: "Pods on Nodes that pull images from private ECR registries: the kubelet's built-in ECR credentials went with the " +
			"in-tree provider (1.27), so those Nodes need the ECR image credential provider, or Pods carry current ECR pull secrets.",
		fix: "On each Node named, install awsccmctl's ecr-credential-provider (the DaemonSet of `awsccmctl install manifests --ecr-credential-provider` copies it onto every node) " +
			"and start the kubelet with --image-credential-provider-config and --image-credential-provider-bin-dir (docs/ecr-credential-provider.md); " +
			"`awsccmctl preflight --node` on the node verifies it.",
	},
}
