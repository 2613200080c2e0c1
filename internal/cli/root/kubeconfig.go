package root

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
)

// checkKubeconfig refuses, before the command does anything, a kubeconfig
// that is not there, whether --kubeconfig (or AWSCCMCTL_KUBECONFIG, or the
// config file) or KUBECONFIG names it, with one message and exit 2.
//
// client-go reads KUBECONFIG as kubectl does: it skips the files that do
// not exist, so with none left it fell back to http://localhost:8080 and
// the command failed much later as unreachable (exit 3), naming neither the
// variable nor the file. A list where some files exist stays valid, as in
// kubectl. The check also stops migrate-from-intree node from editing the
// node's files before it finds its --kubeconfig missing.
func checkKubeconfig(cmd *cobra.Command) error {
	flag := cmd.Flags().Lookup("kubeconfig")
	if flag == nil {
		return nil
	}
	if path := flag.Value.String(); path != "" {
		if _, err := os.Stat(path); err != nil {
			return kubeconfigError("--kubeconfig", path, err)
		}
		return nil
	}
	// Only commands with kubectl's whole flag set (--context among them)
	// load through client-go's rules and so read KUBECONFIG; node's lone
	// --kubeconfig does not.
	env := os.Getenv(clientcmd.RecommendedConfigPathEnvVar)
	if cmd.Flags().Lookup("context") == nil || env == "" {
		return nil
	}
	var missing error
	for _, path := range filepath.SplitList(env) {
		if path == "" {
			continue
		}
		_, err := os.Stat(path) //nolint:gosec // G703: KUBECONFIG is the operator's own; Stat only asks whether the file kubectl would read exists
		if err == nil || !errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if missing == nil {
			missing = err
		}
	}
	if missing == nil {
		return nil
	}
	return kubeconfigError(clientcmd.RecommendedConfigPathEnvVar, env, missing)
}

// kubeconfigError names where the path came from and what to do.
func kubeconfigError(source, path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	problem := err.Error()
	if strings.ContainsRune(path, filepath.ListSeparator) {
		problem = "none of the files exists"
	}
	return exitcode.UsageError(fmt.Errorf("kubeconfig %s (from %s): %s; give the path of the cluster's kubeconfig", path, source, problem))
}
