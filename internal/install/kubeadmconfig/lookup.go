package kubeadmconfig

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"

	"github.com/awsccmctl/awsccmctl/internal/awsapi"
	"github.com/awsccmctl/awsccmctl/pkg/providerid"
)

// Timeouts of the outside lookups.
const (
	kubeadmVersionTimeout = 10 * time.Second
	imdsTimeout           = 10 * time.Second
)

// ErrNoKubeadm is what a VersionFunc returns when no kubeadm binary is on
// PATH.
var ErrNoKubeadm = errors.New("no kubeadm binary on PATH")

// VersionFunc returns the version of the local kubeadm (`kubeadm version -o
// short`, e.g. v1.37.1), or ErrNoKubeadm.
type VersionFunc func(ctx context.Context) (string, error)

// LocalKubeadmVersion runs `kubeadm version -o short` with the kubeadm on
// PATH. It is a VersionFunc.
func LocalKubeadmVersion(ctx context.Context) (string, error) {
	path, err := exec.LookPath("kubeadm")
	if err != nil {
		return "", ErrNoKubeadm
	}
	ctx, cancel := context.WithTimeout(ctx, kubeadmVersionTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "version", "-o", "short").Output() //nolint:gosec // G204: the operator's kubeadm from PATH, as their shell would run it; fixed arguments
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && len(ee.Stderr) > 0 {
			err = fmt.Errorf("%w: %s", err, strings.TrimSpace(string(ee.Stderr)))
		}
		return "", fmt.Errorf("%s version -o short: %w", path, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// NodeIdentity is what the instance metadata service says about the node:
// what Options.ProviderID and Options.NodeName are made of.
type NodeIdentity struct {
	InstanceID, AvailabilityZone, LocalHostname string
}

// ProviderID is the node's providerID, aws:///<zone>/<instance-id>.
func (n NodeIdentity) ProviderID() string { return providerid.Format(n.AvailabilityZone, n.InstanceID) }

// ReadNodeIdentity reads instance-id, placement/availability-zone and
// local-hostname from IMDSv2 (the SDK honours
// AWS_EC2_METADATA_SERVICE_ENDPOINT).
func ReadNodeIdentity(ctx context.Context) (NodeIdentity, error) {
	ctx, cancel := context.WithTimeout(ctx, imdsTimeout)
	defer cancel()
	client, err := awsapi.NewIMDS(ctx, awsapi.Options{})
	if err != nil {
		return NodeIdentity{}, err
	}
	var n NodeIdentity
	for _, f := range []struct {
		path string
		dst  *string
	}{
		{"instance-id", &n.InstanceID},
		{"placement/availability-zone", &n.AvailabilityZone},
		{"local-hostname", &n.LocalHostname},
	} {
		out, err := client.GetMetadata(ctx, &imds.GetMetadataInput{Path: f.path})
		if err != nil {
			return NodeIdentity{}, fmt.Errorf("read meta-data/%s: %w", f.path, err)
		}
		b, err := io.ReadAll(out.Content)
		_ = out.Content.Close()
		if err != nil {
			return NodeIdentity{}, fmt.Errorf("read meta-data/%s: %w", f.path, err)
		}
		*f.dst = strings.TrimSpace(string(b))
	}
	return n, nil
}
