package clusterchecks

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/awsccmctl/awsccmctl/internal/testbed"
)

// kubeletPort is the port seeded Nodes report for their kubelet.
const kubeletPort = 10250

// fakeKubelets answers the apiserver's nodes/proxy requests for seeded
// Nodes as their kubelets would. Each Node gets its own routable address
// (the apiserver refuses to proxy to loopback); the test bed's egress proxy
// hands the apiserver's connections to that address to the Node's handler.
type fakeKubelets struct{ next atomic.Uint32 }

var sharedKubelets = sync.OnceValue(func() *fakeKubelets { return &fakeKubelets{} })

// kubeletSpec says how a seeded Node's kubelet answers.
type kubeletSpec struct {
	// providerID is what /configz reports.
	providerID string
	// configz replaces the whole /configz body when set.
	configz string
	// unreachable: the Node has an address but nothing listens there.
	unreachable bool
}

// attach gives node an address and a kubelet answering for it, until t
// ends. Call it before the Node is created or its status updated.
func (k *fakeKubelets) attach(t testing.TB, node *corev1.Node, spec kubeletSpec) {
	t.Helper()
	n := k.next.Add(1)
	addr := fmt.Sprintf("10.200.%d.%d", n/250, n%250+1)
	node.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: addr}}
	node.Status.DaemonEndpoints.KubeletEndpoint.Port = kubeletPort
	if spec.unreachable {
		return
	}
	body := spec.configz
	if body == "" {
		b, err := json.Marshal(map[string]any{"kubeletconfig": map[string]any{
			"kind": "KubeletConfiguration", "apiVersion": "kubelet.config.k8s.io/v1beta1", "providerID": spec.providerID,
		}})
		if err != nil {
			t.Fatal(err)
		}
		body = string(b)
	}
	target := addr + ":" + strconv.Itoa(kubeletPort)
	t.Cleanup(testbed.Get(t).ServeNode(target, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/configz" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprint(w, body)
	})))
}
