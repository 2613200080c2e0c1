package installcmd_test

import (
	"os"
	"testing"

	"github.com/awsccmctl/awsccmctl/internal/testbed"
)

// TestMain shares one real control plane among the tests of install apply
// and uninstall against a cluster; the other tests run without it.
func TestMain(m *testing.M) { os.Exit(testbed.Main(m, nil)) }
