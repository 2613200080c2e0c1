package deploy

import (
	"os"
	"testing"

	"github.com/awsccmctl/awsccmctl/internal/testbed"
)

// TestMain shares one real control plane among the tests of this package
// that need one; the others run without it.
func TestMain(m *testing.M) { os.Exit(testbed.Main(m, nil)) }
