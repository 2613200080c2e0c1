package clusterchecks

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/awsccmctl/awsccmctl/internal/preflight"
	"github.com/awsccmctl/awsccmctl/internal/testbed"
)

// TestThousandNodes times a cluster-mode preflight over 1,000 Nodes (and
// 1,002 Pods: a kops-style kube-proxy mirror Pod per Node plus the control
// plane) in the real apiserver; the issue asks for this wall time.
func TestThousandNodes(t *testing.T) {
	if testing.Short() {
		t.Skip("seeds 1,000 Nodes")
	}
	const n, workers = 1000, 16
	cs := quietClient(testbed.Get(t).Config)
	s := newSeed(t, cs)
	ctx := context.Background()

	start := time.Now()
	jobs := make(chan int)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range jobs {
				name := fmt.Sprintf("ip-10-0-%d-%d.ec2.internal", i/250, i%250+1)
				node := &corev1.Node{ObjectMeta: s.meta("", name),
					Spec:   corev1.NodeSpec{ProviderID: fmt.Sprintf("aws:///us-east-1%c/i-%017x", 'a'+rune(i%3), i+1)},
					Status: corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{KubeletVersion: v137}}}
				node.Labels[corev1.LabelHostname] = name
				addCloudLabels(node)
				sharedKubelets().attach(t, node, kubeletSpec{providerID: node.Spec.ProviderID})
				created, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
				if err != nil {
					errs <- err
					continue
				}
				if len(created.Status.Addresses) == 0 {
					created.Status = node.Status
					if _, err := cs.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
						errs <- err
						continue
					}
				}
				p := mirrorPod("kube-proxy-"+name, name, labelKops, "kube-proxy", "registry.k8s.io/kube-proxy:"+v137, []string{"kube-proxy"})
				p.Labels[testLabel] = s.run
				if _, err := cs.CoreV1().Pods(kubeSystem).Create(ctx, p, metav1.CreateOptions{}); err != nil {
					errs <- err
				}
			}
		})
	}
	for i := range n {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("seed: %v", err)
	}
	cp0 := "ip-10-0-0-1.ec2.internal"
	s.controlPlanePods(cp0, v137, extAPI, extKCM)
	s.lease(ccmLease, cp0+"_1", time.Second)
	s.kubeadmConfig(kubeadmExternalV1beta4)
	t.Logf("seeded %d Nodes and %d Pods with %d goroutines in %s", n, n+2, workers, time.Since(start).Round(time.Millisecond))

	counted, requests := countingClient(testbed.Get(t).Config)
	for run := 1; run <= 3; run++ {
		requests.reset()
		checks := Checks(Input{Client: counted, Mode: preflight.ModePostInstall})
		start := time.Now()
		rep, err := preflight.Run(ctx, checks, preflight.Options{Mode: preflight.ModePostInstall})
		wall := time.Since(start)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range rep.Findings {
			if f.Status != preflight.StatusPass {
				t.Errorf("%s = %s: %s", f.ID, f.Status, f.Message)
			}
		}
		if f := finding(rep, IDNodesProviderID); f.Message != "an aws:///<zone>/<instance-id> providerID on every Node (1000 Nodes)" {
			t.Errorf("%s: %s", f.ID, f.Message)
		}
		got := requests.snapshot()
		if want := "GET /version x1, GET /api/v1/pods?limit=500 x1, GET /api/v1/pods?continue=… x2, GET /api/v1/namespaces/kube-system/configmaps/kubeadm-config x1, GET /api/v1/nodes?limit=500 x1, GET /api/v1/nodes?continue=… x1, POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews x1, GET /api/v1/nodes/…/proxy/configz x1000, GET /apis/coordination.k8s.io/v1/namespaces/kube-system/leases?limit=500 x1, GET /api/v1/persistentvolumes?limit=500 x1, GET /apis/storage.k8s.io/v1/storageclasses?limit=500 x1"; got != want {
			t.Errorf("requests:\n got %s\nwant %s", got, want)
		}
		t.Logf("run %d: preflight.Run over %d cluster checks, 1,000 Nodes: %s; requests: %s", run, len(checks), wall.Round(time.Millisecond), got)
	}
}

// requestLog counts the HTTP requests a client makes, by method and path
// (a Continue token shows as "continue=…").
type requestLog struct {
	mu    sync.Mutex
	order []string
	count map[string]int
}

func (l *requestLog) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.order, l.count = nil, map[string]int{}
}

func (l *requestLog) snapshot() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var parts []string
	for _, k := range l.order {
		parts = append(parts, fmt.Sprintf("%s x%d", k, l.count[k]))
	}
	return strings.Join(parts, ", ")
}

// nodeProxyPath matches a nodes/proxy path; the count is per path, not per Node.
var nodeProxyPath = regexp.MustCompile(`^/api/v1/nodes/[^/]+/proxy/`)

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func countingClient(c *rest.Config) (kubernetes.Interface, *requestLog) {
	log := &requestLog{count: map[string]int{}}
	c = rest.CopyConfig(c)
	c.WarningHandler = rest.NoWarnings{}
	c.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(r *http.Request) (*http.Response, error) {
			key := r.Method + " " + nodeProxyPath.ReplaceAllString(r.URL.Path, "/api/v1/nodes/…/proxy/")
			switch q := r.URL.Query(); {
			case q.Get("continue") != "":
				key += "?continue=…"
			case q.Get("limit") != "":
				key += "?limit=" + q.Get("limit")
			}
			log.mu.Lock()
			if log.count[key] == 0 {
				log.order = append(log.order, key)
			}
			log.count[key]++
			log.mu.Unlock()
			return rt.RoundTrip(r)
		})
	})
	return kubernetes.NewForConfigOrDie(c), log
}
