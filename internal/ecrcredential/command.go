package ecrcredential

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"

	"github.com/awsccmctl/awsccmctl/internal/awsapi"
	"github.com/awsccmctl/awsccmctl/internal/version"
)

// Streams are the plugin's standard streams: the request comes on In, the
// response goes to Out, logs and errors to Err.
type Streams struct {
	In       io.Reader
	Out, Err io.Writer
}

// CommandOptions customise the command for tests.
type CommandOptions struct {
	// Provider answers requests; zero: one with awsapi.NewECR's clients.
	Provider Provider
	// Executable is the binary install copies (default os.Executable).
	Executable func() (string, error)
}

// NewCommand returns the ecr-credential-provider command: with no
// arguments the kubelet plugin, `install` the DaemonSet's self-install.
func NewCommand(streams Streams, o CommandOptions) *cobra.Command {
	if o.Provider.NewECR == nil {
		o.Provider.NewECR = newECR
	}
	if o.Provider.NewECRPublic == nil {
		o.Provider.NewECRPublic = newECRPublic
	}
	if o.Provider.NewSTS == nil {
		o.Provider.NewSTS = newSTS
	}
	if o.Executable == nil {
		o.Executable = os.Executable
	}
	cmd := &cobra.Command{
		Use:   BinaryName,
		Short: "Kubelet image credential provider for Amazon ECR and ECR Public",
		Long: "Run by the kubelet (CredentialProviderConfig, apiVersion credentialprovider.kubelet.k8s.io/v1):\n" +
			"reads a CredentialProviderRequest on stdin and writes the registry's credentials as a\n" +
			"CredentialProviderResponse on stdout. AWS credentials come from the SDK's standard chain\n" +
			"(on a node: the instance role, which needs ecr:GetAuthorizationToken, and for public.ecr.aws\n" +
			"ecr-public:GetAuthorizationToken and sts:GetServiceBearerToken), or, when the kubelet passes a\n" +
			"service-account token, from the role the service account's " + RoleARNAnnotation + "\n" +
			"annotation (or " + RoleARNEnv + ") names, assumed with that token.\n" +
			"Arguments the CredentialProviderConfig's args pass are ignored, as upstream's provider does.",
		// The kubelet passes the provider's configured args (Kubernetes'
		// documentation shows `args: [get-credentials]`); upstream's
		// provider ignores them, so they must not fail the pull here.
		Args:          cobra.ArbitraryArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				klog.V(2).InfoS("Ignoring arguments, as upstream's ecr-credential-provider does", "args", args)
			}
			return Serve(cmd.Context(), streams, o.Provider)
		},
	}
	cmd.SetOut(streams.Out)
	cmd.SetErr(streams.Err)
	klogFlags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(klogFlags)
	klog.SetOutput(streams.Err)
	klog.LogToStderr(false) // to SetOutput's writer, not os.Stderr
	if f := klogFlags.Lookup("v"); f != nil {
		cmd.PersistentFlags().AddGoFlag(f)
	}
	cmd.AddCommand(newInstallCommand(streams, o))
	cmd.AddCommand(&cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(streams.Out, version.Get().Version)
			return err
		},
	})
	return cmd
}

// Serve answers one kubelet request: the request from streams.In, the
// response to streams.Out. Nothing is written to Out on error.
func Serve(ctx context.Context, streams Streams, p Provider) error {
	data, err := io.ReadAll(streams.In)
	if err != nil {
		return fmt.Errorf("read the request on stdin: %w", err)
	}
	req, err := DecodeRequest(data)
	if err != nil {
		return err
	}
	resp, err := p.Credentials(ctx, req)
	if err != nil {
		return err
	}
	out, err := EncodeResponse(resp)
	if err != nil {
		return fmt.Errorf("image %q: encode the response: %w", req.Image, err)
	}
	_, err = streams.Out.Write(out)
	return err
}

func newInstallCommand(streams Streams, o CommandOptions) *cobra.Command {
	var dir string
	var wait bool
	cmd := &cobra.Command{
		Use:   "install --dir DIR [--wait]",
		Short: "Copy this binary into the kubelet's credential provider directory (the DaemonSet's command)",
		Long: "Copies this binary to DIR/" + BinaryName + " (mode 0755) atomically: a temporary file in DIR\n" +
			"renamed over the old one, so the kubelet never runs a partial file. With --wait it then\n" +
			"waits until it is stopped, as a DaemonSet's container must.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dir == "" {
				return fmt.Errorf("--dir is required: the host's kubelet credential provider directory as mounted in the container")
			}
			self, err := o.Executable()
			if err != nil {
				return fmt.Errorf("find this binary: %w", err)
			}
			res, err := Install(self, dir)
			if err != nil {
				return err
			}
			state := "installed"
			if !res.Changed {
				state = "already up to date"
			}
			fmt.Fprintf(streams.Out, "%s: %s (%s)\n", res.Path, state, version.Get().Version)
			if wait {
				<-cmd.Context().Done()
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "the kubelet's --image-credential-provider-bin-dir, as mounted in the container")
	cmd.Flags().BoolVar(&wait, "wait", false, "after installing, wait until stopped (SIGTERM)")
	return cmd
}

// newECR builds the real ECR call for a registry: region from its host,
// FIPS and dual-stack endpoints as its host is.
func newECR(ctx context.Context, r Registry) (ECR, error) {
	c, err := awsapi.NewECR(ctx, awsapi.Options{Region: r.Region}, awsapi.ECREndpoint{FIPS: r.FIPS, DualStack: r.DualStack})
	if err != nil {
		return ECR{}, err
	}
	return ECR{GetAuthorizationToken: c.GetAuthorizationToken}, nil
}

// newECRPublic builds the real ECR Public call (us-east-1).
func newECRPublic(ctx context.Context) (ECRPublic, error) {
	c, err := awsapi.NewECRPublic(ctx, awsapi.Options{})
	if err != nil {
		return ECRPublic{}, err
	}
	return ECRPublic{GetAuthorizationToken: c.GetAuthorizationToken}, nil
}

// newSTS builds the real STS call for service-account roles in region.
func newSTS(ctx context.Context, region string) (STS, error) {
	c, err := awsapi.NewWebIdentitySTS(ctx, awsapi.Options{Region: region})
	if err != nil {
		return STS{}, err
	}
	return STS{AssumeRoleWithWebIdentity: c.AssumeRoleWithWebIdentity}, nil
}
