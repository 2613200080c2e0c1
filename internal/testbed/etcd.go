package testbed

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/awsccmctl/awsccmctl/internal/childproc"
)

// etcdQuotaBytes is etcd's backend quota (--quota-backend-bytes): large
// enough for load tests with thousands of Nodes and repeated churn.
const etcdQuotaBytes = 8 << 30

type etcdProc struct {
	*childproc.Process
	clientURL string
}

// startEtcd starts etcd on two free loopback ports and waits for /health.
// It tries again once, with new ports, if a port was taken in between.
func startEtcd(ctx context.Context, binDir, dir string) (*etcdProc, error) {
	var err error
	for attempt := 0; attempt < 2; attempt++ {
		var e *etcdProc
		var collided bool
		e, collided, err = startEtcdOnce(ctx, binDir, dir)
		if err == nil {
			return e, nil
		}
		if !collided {
			break
		}
	}
	return nil, err
}

func startEtcdOnce(ctx context.Context, binDir, dir string) (_ *etcdProc, collided bool, _ error) {
	ports, err := freePorts(ctx, 2)
	if err != nil {
		return nil, false, err
	}
	dataDir := filepath.Join(dir, "etcd-data")
	if err := os.RemoveAll(dataDir); err != nil { // leftovers of a failed attempt
		return nil, false, err
	}
	clientURL := "http://127.0.0.1:" + strconv.Itoa(ports[0])
	peerURL := "http://127.0.0.1:" + strconv.Itoa(ports[1])
	args := []string{
		"--name=testbed",
		"--data-dir=" + dataDir,
		"--listen-client-urls=" + clientURL,
		"--advertise-client-urls=" + clientURL,
		"--listen-peer-urls=" + peerURL,
		"--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=testbed=" + peerURL,
		"--initial-cluster-state=new",
		"--unsafe-no-fsync",
		"--quota-backend-bytes=" + strconv.Itoa(etcdQuotaBytes),
		"--log-level=warn",
	}
	logPath := filepath.Join(dir, "etcd.log")
	// ctx bounds the start; the process lives until the control plane's Stop.
	p, err := childproc.StartLogged("etcd", exec.CommandContext(context.Background(), filepath.Join(binDir, EtcdBinary), args...), logPath) //nolint:contextcheck // see above
	if err != nil {
		return nil, false, err
	}
	e := &etcdProc{Process: p, clientURL: clientURL}
	if err := e.waitHealthy(ctx, 30*time.Second); err != nil {
		_ = p.Stop(0)
		collided = logContains(logPath, "address already in use")
		return nil, collided, fmt.Errorf("%w\n--- tail of %s ---\n%s", err, logPath, childproc.LogTail(logPath, logTailBytes))
	}
	return e, false, nil
}

func (e *etcdProc) waitHealthy(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client := &http.Client{Timeout: 2 * time.Second}
	last := "no answer yet"
	err := poll(ctx, 10*time.Millisecond, 200*time.Millisecond, func() (bool, error) {
		if e.Exited() {
			return false, fmt.Errorf("etcd failed to start: %s", e.ExitStatus())
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.clientURL+"/health", nil)
		resp, err := client.Do(req)
		if err != nil {
			last = err.Error()
			return false, nil //nolint:nilerr // not up yet: keep polling; the timeout reports last
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		_ = resp.Body.Close()
		last = fmt.Sprintf("HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(body)))
		return resp.StatusCode == http.StatusOK && strings.Contains(string(body), `"health":"true"`), nil
	})
	if err != nil && ctx.Err() != nil && !e.Exited() {
		return fmt.Errorf("etcd not healthy after %s (last: %s)", timeout, last)
	}
	return err
}

// freePorts returns n distinct loopback ports that were free a moment ago.
// All listeners are held until every port is picked, so they differ.
func freePorts(ctx context.Context, n int) ([]int, error) {
	ports := make([]int, 0, n)
	for i := 0; i < n; i++ {
		l, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("pick a free port: %w", err)
		}
		defer func() { _ = l.Close() }()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// poll calls cond with exponential backoff (from min to max) until it returns
// true, an error, or ctx ends (then ctx's error is returned).
func poll(ctx context.Context, min, max time.Duration, cond func() (bool, error)) error {
	delay := min
	for {
		ok, err := cond()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		if delay = delay * 3 / 2; delay > max {
			delay = max
		}
	}
}
