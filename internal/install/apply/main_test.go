package apply

import (
	"os"
	"testing"

	"github.com/awsccmctl/awsccmctl/internal/testbed"
)

// TestMain shares one real control plane among the tests of this package.
func TestMain(m *testing.M) { os.Exit(testbed.Main(m, nil)) }
