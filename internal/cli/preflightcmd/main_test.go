package preflightcmd

import (
	"os"
	"testing"

	"github.com/awsccmctl/awsccmctl/internal/testbed"
)

// TestMain shares one real control plane (etcd + kube-apiserver) among the
// cluster-mode tests of this package; the node-mode tests do not use it.
func TestMain(m *testing.M) { os.Exit(testbed.Main(m, nil)) }
