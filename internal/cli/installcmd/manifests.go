package installcmd

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/awsccmctl/awsccmctl/internal/install"
)

// ManifestsOptions are the flags of `install manifests`.
type ManifestsOptions struct {
	ValueOptions
	// OutputDir, when set, receives one file per object instead of stdout.
	OutputDir string
}

func newManifestsCommand(streams Streams) *cobra.Command {
	o := &ManifestsOptions{}
	cmd := &cobra.Command{
		Use:   "manifests",
		Short: "Write the CCM's manifests as YAML, to stdout or one file per object (--output-dir)",
		Long: `manifests renders the objects install would apply, in apply order, as one
multi-document YAML stream on stdout, or with --output-dir as one file per
object named NN-kind-name.yaml (for GitOps). It does not contact the cluster.`,
		Example: `  awsccmctl install manifests --cluster-name prod --region eu-central-1 > ccm.yaml
  awsccmctl install manifests --config install.yaml --output-dir deploy/ccm`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v, err := o.Values(cmd.Flags())
			if err != nil {
				return err
			}
			return WriteManifests(v, o.OutputDir, streams)
		},
	}
	o.AddFlags(cmd.Flags())
	cmd.Flags().StringVar(&o.OutputDir, "output-dir", "", "write one file per object into this folder instead of stdout")
	return cmd
}

// WriteManifests renders v and writes the stream to streams.Out, or with dir
// one file per object into dir, reporting each file on streams.Err.
func WriteManifests(v install.Values, dir string, streams Streams) error {
	objs, err := install.RenderObjects(v)
	if err != nil {
		return err
	}
	if dir == "" {
		for i, o := range objs {
			if i > 0 {
				if _, err := io.WriteString(streams.Out, "---\n"); err != nil {
					return err
				}
			}
			if _, err := streams.Out.Write(o.YAML); err != nil {
				return err
			}
		}
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--output-dir: %w", err)
	}
	written := map[string]bool{}
	for i, o := range objs {
		name := FileName(i, o)
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, o.YAML, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		written[name] = true
		fmt.Fprintf(streams.Err, "wrote %s (%s %s)\n", path, o.Kind, o.Name)
	}
	return removeStale(dir, written, streams.Err)
}

var unsafeFileChars = regexp.MustCompile(`[^a-z0-9.-]+`)

// FileName is the --output-dir file of the i-th object: NN-kind-name.yaml,
// lower case, with characters other than letters, digits, dots and dashes
// (the colon of system:cloud-controller-manager) replaced by a dash.
func FileName(i int, o install.Object) string {
	name := unsafeFileChars.ReplaceAllString(strings.ToLower(o.Name), "-")
	return fmt.Sprintf("%02d-%s-%s.yaml", i+1, strings.ToLower(o.Kind), name)
}

// ourFile matches the names FileName gives.
var ourFile = regexp.MustCompile(`^[0-9]{2}-(serviceaccount|clusterrole|clusterrolebinding|rolebinding|configmap|daemonset|deployment)-[a-z0-9.-]+\.yaml$`)

// removeStale deletes files an earlier run wrote that this run did not
// (a DaemonSet after switching to a Deployment), so the folder never holds
// both. Only files named like ours and labelled as managed by awsccmctl go.
func removeStale(dir string, written map[string]bool, log io.Writer) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	marker := []byte(install.LabelManagedBy + ": " + install.ManagedBy)
	for _, e := range entries {
		if e.IsDir() || written[e.Name()] || !ourFile.MatchString(e.Name()) {
			continue
		}
		path := filepath.Join(dir, e.Name())
		data, err := os.ReadFile(path)
		if err != nil || !bytes.Contains(data, marker) {
			continue
		}
		if err := os.Remove(path); err != nil {
			return fmt.Errorf("remove stale %s: %w", path, err)
		}
		fmt.Fprintf(log, "removed %s (no longer rendered)\n", path)
	}
	return nil
}
