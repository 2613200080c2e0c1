package root

import (
	"bytes"
	"context"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
)

// captureStderr runs f with os.Stderr, where klog writes, redirected, and
// returns what was written.
func captureStderr(t *testing.T, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stderr
	os.Stderr = w
	done := make(chan string)
	go func() {
		var b bytes.Buffer
		_, _ = io.Copy(&b, r)
		done <- b.String()
	}()
	defer func() { os.Stderr = saved }()
	f()
	os.Stderr = saved
	_ = w.Close()
	return <-done
}

func closedPort(t *testing.T) string {
	t.Helper()
	l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// TestNoClientGoNoiseOnStderr: with the API server's port closed, the
// discovery cache install apply and migrate apply map objects with
// (memcache.go) logs "Unhandled Error" lines through klog on stderr; after
// a command has run, it writes nothing, and preflight prints only its own
// error.
func TestNoClientGoNoiseOnStderr(t *testing.T) {
	kubeconfig := closedPortKubeconfig(t)
	var cmdErr error
	var errStream string
	stderr := captureStderr(t, func() {
		_, errStream, cmdErr = runAll(t, "preflight", "--aws=false", "--kubeconfig", kubeconfig)

		// What apply.Client does, against the same dead server.
		disc := discovery.NewDiscoveryClientForConfigOrDie(&rest.Config{Host: "https://127.0.0.1:" + closedPort(t)})
		mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))
		if _, err := mapper.RESTMapping(schema.GroupKind{Kind: "ConfigMap"}, "v1"); err == nil {
			t.Error("RESTMapping against a closed port succeeded")
		}
	})
	if stderr != "" {
		t.Errorf("client-go wrote to stderr:\n%s", stderr)
	}
	if exitcode.Of(cmdErr) != exitcode.Unreachable || !strings.Contains(cmdErr.Error(), "connection refused") {
		t.Errorf("preflight: exit %d, %v; want exit 3 saying the connection was refused", exitcode.Of(cmdErr), cmdErr)
	}
	if errStream != "" {
		t.Errorf("preflight wrote to its error stream; the error is printed once, by main:\n%s", errStream)
	}
}
