package install

import (
	"os"
	"testing"

	"github.com/awsccmctl/awsccmctl/internal/testbed"
)

// TestMain shares one real control plane (etcd + kube-apiserver) with the
// server-side dry-run tests; the other tests do not need it.
func TestMain(m *testing.M) { os.Exit(testbed.Main(m, nil)) }
