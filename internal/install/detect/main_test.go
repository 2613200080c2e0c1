package detect

import (
	"os"
	"testing"

	"github.com/awsccmctl/awsccmctl/internal/testbed"
)

// TestMain shares one real control plane (etcd + kube-apiserver) with the
// test that counts Nodes on it; the other tests use the fake clientset.
func TestMain(m *testing.M) { os.Exit(testbed.Main(m, nil)) }
