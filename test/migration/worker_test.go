package migration

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/awsccmctl/awsccmctl/internal/testbed/realkubelet"
	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// startWorker brings up the scenario's worker on an Ubuntu-style host
// (short host name ip-10-0-2-20, so its in-tree kubelet labels its Node
// with it: the external kubelet needs --hostname-override to keep the
// Node and --node-labels to keep the label). Where the host can run it, a
// real kubelet v1.26.13 (internal/testbed/realkubelet) registers the Node
// itself on the in-tree provider, from its own instance's IMDS and EC2,
// and the node step restarts it. Elsewhere (not root, no unshare) the
// Node is registered as that kubelet would and a stand-in runs instead;
// the transcript says which.
func (s *scenario) startWorker(t *testing.T) {
	t.Helper()
	if why := realkubelet.Unsupported(context.Background()); why != "" {
		t.Logf("the worker runs a kubelet stand-in, not the real kubelet: %s", why)
		s.transcript.WriteString("worker: a kubelet stand-in (" + why + ")\n")
		registerInTreeNode(t, workNode, "us-east-1b", workID, "10.0.2.20", false)
		s.workerRoot = nodeRoot(t, "kubeadm-worker", nil)
		writeFile(t, filepath.Join(s.workerRoot, "etc", "hostname"), []byte(workHost+"\n"))
		setHostnameLabel(t, workNode, workHost)
		return
	}
	imds, err := env.aws.IMDSFor(workID)
	if err != nil {
		t.Fatal(err)
	}
	e := awsemu.IMDSEnvFor(env.awsURL)
	e["AWS_EC2_METADATA_SERVICE_ENDPOINT"] = imds
	n := realkubelet.Start(t, realkubelet.Options{
		ControlPlane: env.cp, NodeName: workNode, Hostname: workHost, Env: e.List(),
		CloudConfig: realkubelet.InTreeCloudConfig(clusterID, region, env.awsURL),
	})
	s.workerRoot, s.realWorker = n.Root, true
	s.workerPath = n.SystemctlDir + string(os.PathListSeparator) + os.Getenv("PATH")
	s.transcript.WriteString("worker: the real kubelet v1.26.13 on --cloud-provider=aws, log " + n.LogPath + "\n")
	waitFor(t, time.Minute, "the worker's in-tree kubelet to register its Node", func(ctx context.Context) (bool, error) {
		node, err := env.kube.CoreV1().Nodes().Get(ctx, workNode, metav1.GetOptions{})
		return err == nil && node.Spec.ProviderID != "" && len(node.Status.Addresses) > 0, nil
	})
}

// startAgent runs the node agent on the scenario's nodes; the real
// worker's node step finds that node's own systemctl.
func (s *scenario) startAgent(t *testing.T) *nodeAgent {
	t.Helper()
	roots := map[string]string{cpNode: s.cp.root, workNode: s.workerRoot}
	var running map[string]string
	if s.realWorker {
		running = map[string]string{workNode: s.workerPath}
	}
	return startNodeAgentWith(t, s.plan, roots, nil, running)
}
