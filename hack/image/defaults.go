package main

// Names and paths inside the image. Changing any of them changes what
// users' manifests (securityContext, SSL_CERT_FILE) rely on.
const (
	// binaryName is the file name of the CCM and the image's entrypoint.
	binaryName = "aws-cloud-controller-manager"
	// entrypoint is where the binary lives in the image.
	entrypoint = "/" + binaryName
	// ecrProviderName is the kubelet credential provider's file, at the
	// image's root: the ecr-credential-provider DaemonSet runs
	// /ecr-credential-provider install (internal/install templates).
	ecrProviderName = "ecr-credential-provider"
	// awsccmctlPath is the CLI, which `migrate-from-intree apply
	// --node-runner=pods` runs in its node-step Pods
	// (migrate.NodePodBinary; TestAwsccmctlWhereNodePodsRunIt).
	awsccmctlPath = "usr/local/bin/awsccmctl"
	// caBundlePath is where the Mozilla roots are written; SSL_CERT_FILE
	// points to it.
	caBundlePath = "/etc/ssl/certs/ca-certificates.crt"

	// nonrootUID and nonrootGID are distroless's nonroot user, so policies
	// written for distroless images (runAsUser: 65532) apply unchanged.
	nonrootUID  = 65532
	nonrootGID  = 65532
	nonrootName = "nonroot"
	nonrootHome = "/home/nonroot"

	// sourceURL is the org.opencontainers.image.source label.
	sourceURL = "https://github.com/awsccmctl/awsccmctl"
	// defaultRepository names the image in the archives; override with
	// --repository.
	defaultRepository = "localhost/aws-cloud-controller-manager"
)

// OCI annotation and label keys (image-spec annotations.md) and the one
// containerd reads when importing an archive.
const (
	labelSource      = "org.opencontainers.image.source"
	labelVersion     = "org.opencontainers.image.version"
	labelRevision    = "org.opencontainers.image.revision"
	annotationRef    = "org.opencontainers.image.ref.name"
	annotationCtrRef = "io.containerd.image.name"
)

// Output formats.
const (
	formatOCI    = "oci"
	formatDocker = "docker"
)
