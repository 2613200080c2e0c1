package testbed

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"sync"
	"testing"
)

// shortReason is why a test that needs the test bed is skipped under -short.
const shortReason = "testbed: -short (make test-unit) leaves out tests that need the control plane; make test runs them"

// The control plane shared by the tests of one package (set up by Main).
var (
	sharedMu   sync.Mutex
	shared     *ControlPlane
	skipReason string
	mainRan    bool
)

// Main runs a test package against one shared control plane; call it from
// TestMain and pass the result to os.Exit:
//
//	func TestMain(m *testing.M) { os.Exit(testbed.Main(m, nil)) }
//
// If the binaries are missing, it fails (returns 1) when $CI is non-empty;
// otherwise it prints "testbed: SKIP integration tests: <reason>; run
// hack/build-testbed.sh" and runs the tests, and Get skips those that need
// the control plane. If the control plane fails to start or setup returns an
// error, it returns 1 without running the tests. The control plane is
// always stopped before Main returns.
func Main(m *testing.M, setup func(cp *ControlPlane) error) int {
	return MainOptions(m, Options{}, setup)
}

// MainOptions is Main with a control plane started with opts (for example
// an audit policy; Dir is ignored, each run gets a fresh folder).
func MainOptions(m *testing.M, opts Options, setup func(cp *ControlPlane) error) int {
	sharedMu.Lock()
	mainRan = true
	sharedMu.Unlock()

	if !flag.Parsed() {
		flag.Parse() // for testing.Short and testing.Verbose; m.Run accepts parsed flags
	}
	if testing.Short() {
		// make test-unit: the fast loop runs what needs no control plane;
		// make test (what CI runs) never passes -short.
		sharedMu.Lock()
		skipReason = shortReason
		sharedMu.Unlock()
		return m.Run()
	}
	if _, err := BinDir(); err != nil {
		reason := err.Error()
		if mb := (*MissingBinariesError)(nil); errors.As(err, &mb) {
			reason = mb.Reason
		}
		if os.Getenv("CI") != "" {
			fmt.Fprintf(os.Stderr, "testbed: FAIL: integration tests need the control-plane binaries and CI is set: %s; run hack/build-testbed.sh\n", reason)
			return 1
		}
		fmt.Fprintf(os.Stderr, "testbed: SKIP integration tests: %s; run hack/build-testbed.sh\n", reason)
		sharedMu.Lock()
		skipReason = reason
		sharedMu.Unlock()
		return m.Run()
	}

	opts.Dir = ""
	cp, err := Start(context.Background(), opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "testbed: FAIL: %v\n", err)
		return 1
	}
	defer func() {
		sharedMu.Lock()
		shared = nil
		sharedMu.Unlock()
		if err := cp.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "testbed: stop control plane: %v\n", err)
		}
	}()
	if testing.Verbose() {
		fmt.Fprintf(os.Stderr, "testbed: control plane ready at %s in %s (state in %s)\n", cp.URL, cp.StartupTime.Round(1e6), cp.Dir)
	}
	if setup != nil {
		if err := setup(cp); err != nil {
			fmt.Fprintf(os.Stderr, "testbed: FAIL: setup: %v\n", err)
			return 1
		}
	}
	sharedMu.Lock()
	shared = cp
	sharedMu.Unlock()
	return m.Run()
}

// Get returns the control plane started by Main. When Main found no
// binaries (possible only with $CI unset), it skips the test instead. Calling
// Get in a package whose TestMain does not use Main fails the test.
func Get(t testing.TB) *ControlPlane {
	t.Helper()
	sharedMu.Lock()
	cp, reason, ran := shared, skipReason, mainRan
	sharedMu.Unlock()
	switch {
	case cp != nil:
		return cp
	case reason == shortReason:
		t.Skip(shortReason)
	case reason != "":
		t.Skipf("testbed: SKIP integration tests: %s; run hack/build-testbed.sh", reason)
	case !ran:
		t.Fatal("testbed.Get: TestMain must call testbed.Main")
	default:
		t.Fatal("testbed.Get: no control plane (called after Main returned?)")
	}
	return nil
}
