package nodechecks

// checkDoc is a check's reference text: what it means, how to fix it.
type checkDoc struct{ description, fix string }

// checkDocs holds the reference text of every node check, by ID; the
// control-plane ones serve cluster mode too (ControlPlaneRules).
// hack/gen-docs writes them to docs/reference/preflight-checks.md.
var checkDocs = map[string]checkDoc{
	IDNodeFilesReadable: {
		description: "Reads the node's static Pod manifests (/etc/kubernetes/manifests) and the kubelet's systemd unit, drop-ins, " +
			"environment files and configuration file, as systemd and the kubelet would. Every other node check draws on these files, so a file that " +
			"exists but does not parse fails here, and a root with no kubelet or control-plane files at all is not a node.",
		fix: "Fix or remove each file named (the kubelet and systemd would fail on it too). With no node files found, run " +
			"`awsccmctl preflight --node` on a Kubernetes node, or pass --root the node's root file system.",
	},
	IDVersionsControlPlane: {
		description: "The control-plane version from the static Pods' images. The out-of-tree CCM needs a control plane that can run " +
			"with --cloud-provider=external; migrate-from-intree applies only to control planes up to 1.26, which still carry the in-tree AWS provider.",
		fix: "Upgrade the control plane to a version the mode supports, or use the mode that fits it: `--mode=pre-migrate` before " +
			"migrate-from-intree (1.26 and older), `pre-install` or `post-install` for newer control planes.",
	},
	IDAPIServerCloudProvider: {
		description: "kube-apiserver must not run the in-tree cloud provider: with the external CCM it has no --cloud-provider (the flag " +
			"was removed in 1.33, and --cloud-provider=aws stops the apiserver from starting since 1.27).",
		fix: "Remove --cloud-provider from the kube-apiserver manifest (kubeadm: also from apiServer.extraArgs in the kubeadm-config " +
			"ClusterConfiguration; kops: spec.kubeAPIServer.cloudProvider).",
	},
	IDAPIServerCloudConfig: {
		description: "kube-apiserver must not read a cloud config: it belongs to the CCM, and the flag was removed in 1.33.",
		fix: "Remove --cloud-config from the kube-apiserver manifest (kubeadm: also from apiServer.extraArgs in the kubeadm-config " +
			"ClusterConfiguration) and give the file to the CCM instead.",
	},
	IDAPIServerAdmission: {
		description: "The PersistentVolumeLabel admission plugin needs the in-tree provider and was removed in 1.31; an apiserver " +
			"that enables it does not start. The CCM's cloud-pv-admission-labeler replaces it.",
		fix: "Remove PersistentVolumeLabel from kube-apiserver's --enable-admission-plugins (kubeadm: also from apiServer.extraArgs in " +
			"kubeadm-config; kops: spec.kubeAPIServer.enableAdmissionPlugins).",
	},
	IDKCMCloudProvider: {
		description: "kube-controller-manager's --cloud-provider decides who runs the cloud controllers: aws before a migration " +
			"(pre-migrate), external once the CCM runs them. Two managers running them fight over Nodes, routes and load balancers.",
		fix: "Set --cloud-provider=external on kube-controller-manager before installing the CCM; on a live in-tree cluster use " +
			"`awsccmctl migrate-from-intree`, which moves the controllers without a gap.",
	},
	IDKCMLeaderElect: {
		description: "kube-controller-manager must elect a leader: leader migration and a safe hand-over of the cloud controllers " +
			"to the CCM work through Leases.",
		fix: "Set --leader-elect=true on kube-controller-manager (or leave the flag out: true is the default).",
	},
	IDKCMCloudRoutes: {
		description: "When kube-controller-manager allocates node CIDRs and configures cloud routes, the route controller moves to " +
			"the CCM with the rest; the CCM must then be run with the same --configure-cloud-routes and --cluster-cidr, or VPC routes to Pods stop being kept.",
		fix: "Run the CCM with --configure-cloud-routes=true --cluster-cidr=<the cluster's Pod CIDR> and tag the route table for the " +
			"cluster; if the CNI does not need VPC routes, set --configure-cloud-routes=false instead.",
	},
	IDKubeletCloudProvider: {
		description: "With an external CCM every kubelet runs with --cloud-provider=external: it registers its Node with the " +
			"uninitialized taint and lets the CCM set the providerID, zone labels and addresses. A kubelet with aws no longer starts (1.27+).",
		fix: "Set --cloud-provider=external in the file the kubelet takes its flags from (kubeadm: KUBELET_KUBEADM_ARGS in " +
			"/var/lib/kubelet/kubeadm-flags.env), then `systemctl restart kubelet`.",
	},
	IDKubeletNodeIdentity: {
		description: "The CCM must find each Node's instance: by its providerID (aws:///<zone>/<instance-id>, or aws:////<instance-id> " +
			"without the zone), else by the Node name being the instance's private DNS name or instance ID.",
		fix: "Start the kubelet with --provider-id=aws:///$ZONE/$INSTANCE_ID (from IMDS), or providerID in its configuration file, or " +
			"keep the Node name the instance's private DNS name (--hostname-override).",
	},
	IDKubeletSkew: {
		description: "The kubelet's version must be within the supported skew of the control plane (not newer, at most 3 minors older) " +
			"before the move to the CCM; only checked when the kubelet's version is known.",
		fix: "Upgrade the kubelet to within 3 minor versions of the control plane, or upgrade the control plane first if the kubelet is newer.",
	},
	IDKubeletECRProvider: {
		description: "The in-tree AWS provider gave the kubelet built-in ECR credentials; they were removed in 1.27, so a node that " +
			"pulls private ECR images needs the ecr-credential-provider plugin configured, or it cannot pull an ECR image it has not cached.",
		fix: "Install awsccmctl's ecr-credential-provider (`awsccmctl install manifests --ecr-credential-provider` renders a DaemonSet that copies it onto every node), " +
			"write the CredentialProviderConfig `awsccmctl install kubeadm --print-credential-provider-config` prints, start the kubelet with " +
			"--image-credential-provider-config and --image-credential-provider-bin-dir (`awsccmctl install kubeadm --ecr-credential-provider`), " +
			"then `systemctl restart kubelet` (docs/ecr-credential-provider.md).",
	},
}
