package chart

import (
	"os"
	"testing"

	"github.com/awsccmctl/awsccmctl/internal/testbed"
)

// One control plane for the package's release tests; the render and lint
// tests need only chart-check.
func TestMain(m *testing.M) { os.Exit(testbed.Main(m, nil)) }
