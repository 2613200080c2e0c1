package migrate

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/awsccmctl/awsccmctl/internal/kubeletrun"
)

// switchedReport is a node's kubelet-external report whose kubelet runs
// external, healthy, started a second after its files were edited.
func switchedReport(node string) NodeReport {
	edited := time.Date(2026, 11, 28, 1, 0, 0, 0, time.UTC)
	mod := metav1.NewMicroTime(edited)
	return NodeReport{Node: node, Phase: PhaseKubeletExternal, Time: metav1.NewMicroTime(edited.Add(3 * time.Second)),
		KubeletRestarted: true, KubeletFilesCloudProvider: providerExternal, KubeletFilesModified: &mod, KubeletNodeName: node,
		Kubelet: &kubeletrun.Running{PID: 4242, Started: edited.Add(time.Second), CloudProvider: providerExternal, HostnameOverride: node, Healthz: "ok"}}
}

func TestDecideKubelets(t *testing.T) {
	with := func(node string, edit func(*NodeReport)) map[string]NodeReport {
		r := switchedReport(node)
		edit(&r)
		return map[string]NodeReport{"n1": switchedReport("n1"), node: r}
	}
	nodes := []string{"n1", "n2"}
	for _, tc := range []struct {
		name      string
		o         kubeletObservation
		ok, guard bool
		want      []string
	}{
		{"every kubelet switched", kubeletObservation{Nodes: nodes, Phase: PhaseKubeletExternal, Reports: with("n2", func(*NodeReport) {})}, true, false,
			[]string{"2 of 2 nodes run a healthy kubelet started after its files were edited, with the flags of phase kubelet-external"}},
		{"files edited, kubelet never restarted (--restart-kubelet=false)", kubeletObservation{Nodes: nodes, Phase: PhaseKubeletExternal, Reports: with("n2", func(r *NodeReport) {
			r.KubeletRestarted, r.Kubelet.CloudProvider = false, "aws"
		})}, false, false, []string{"1 of 2", "n2: the running kubelet (pid 4242) runs --cloud-provider=aws while its files say external: restart it"}},
		{"running external, but started before the last edit", kubeletObservation{Nodes: nodes, Phase: PhaseKubeletExternal, Reports: with("n2", func(r *NodeReport) {
			r.Kubelet.Started = r.KubeletFilesModified.Add(-10 * time.Second)
		})}, false, false, []string{"n2: the running kubelet (pid 4242) started at 2026-11-28T00:59:50Z, before its files were edited at 2026-11-28T01:00:00Z"}},
		{"a start a second before the edit is the clock's grain", kubeletObservation{Nodes: nodes, Phase: PhaseKubeletExternal, Reports: with("n2", func(r *NodeReport) {
			r.Kubelet.Started = r.KubeletFilesModified.Add(-time.Second)
		})}, true, false, nil},
		{"unhealthy", kubeletObservation{Nodes: nodes, Phase: PhaseKubeletExternal, Reports: with("n2", func(r *NodeReport) {
			r.Kubelet.Healthz = "HTTP 500: [-]syncloop failed"
		})}, false, false, []string{"n2: the kubelet (pid 4242) answers /healthz: HTTP 500"}},
		{"no kubelet seen", kubeletObservation{Nodes: nodes, Phase: PhaseKubeletExternal, Reports: with("n2", func(r *NodeReport) {
			r.Kubelet, r.KubeletError = nil, "no kubelet is running: nothing listens on port 10248"
		})}, false, false, []string{"n2: no kubelet is running: nothing listens on port 10248; run the node step again once the kubelet runs"}},
		{"files not external after the phase", kubeletObservation{Nodes: nodes, Phase: PhaseKubeletExternal, Reports: with("n2", func(r *NodeReport) {
			r.KubeletFilesCloudProvider = ""
		})}, false, false, []string{"n2: the kubelet's files say --cloud-provider=(none) after phase kubelet-external"}},
		{"registers under another name: a second Node", kubeletObservation{Nodes: nodes, Phase: PhaseKubeletExternal, Reports: with("n2", func(r *NodeReport) {
			r.KubeletNodeName = "ip-10-0-2-20"
		})}, false, true, []string{`the external kubelet on n2 registers as Node "ip-10-0-2-20", not "n2"`, "--hostname-override=n2"}},
		{"a node not reported yet", kubeletObservation{Nodes: nodes, Phase: PhaseKubeletExternal, Reports: map[string]NodeReport{"n1": switchedReport("n1")}, Missing: []string{"n2"}}, false, false,
			[]string{"1 of 2", "no report yet from n2"}},
		{"restore: in-tree again as the restored files say", kubeletObservation{Nodes: nodes, Phase: PhaseRestore, Reports: map[string]NodeReport{"n1": restoredReport("n1"), "n2": restoredReport("n2")}}, true, false,
			[]string{"2 of 2 nodes run a healthy kubelet started after its files were edited, with the flags of phase restore"}},
		{"restore: files restored, kubelet still external", kubeletObservation{Nodes: nodes, Phase: PhaseRestore, Reports: map[string]NodeReport{"n1": restoredReport("n1"), "n2": func() NodeReport {
			r := restoredReport("n2")
			r.Kubelet.CloudProvider = providerExternal
			return r
		}()}}, false, false, []string{"n2: the running kubelet (pid 4242) runs --cloud-provider=external while its files say aws"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := decideKubelets(tc.o)
			checkGate(t, res, err, tc.ok, tc.guard, tc.want...)
		})
	}
}

// restoredReport is a node's restore report: the kubelet in-tree as its files say.
func restoredReport(node string) NodeReport {
	r := switchedReport(node)
	r.Phase, r.KubeletFilesCloudProvider, r.KubeletNodeName = PhaseRestore, "aws", ""
	r.Kubelet.CloudProvider, r.Kubelet.HostnameOverride = "aws", ""
	return r
}

func TestDecideKubeletsListsFewAtScale(t *testing.T) {
	var nodes, missing []string
	for i := range 5000 {
		n := fmt.Sprintf("ip-10-0-%d-%d.ec2.internal", i/250, i%250)
		nodes = append(nodes, n)
		missing = append(missing, n)
	}
	res, err := decideKubelets(kubeletObservation{Nodes: nodes, Phase: PhaseKubeletExternal, Reports: map[string]NodeReport{}, Missing: missing})
	checkGate(t, res, err, false, false, "0 of 5000 nodes", "ip-10-0-0-4.ec2.internal; and 4995 more")
	if n := len(fmt.Sprint(res.evidence)); n > 1000 {
		t.Errorf("the evidence at 5,000 nodes is %d bytes; it must stay a summary", n)
	}
}

func TestDecideKubeletsExternal(t *testing.T) {
	groups := []NodeGroup{{Name: "control-plane", Nodes: []string{"cp"}}, {Name: "workers", Nodes: []string{"w1", "w2"}}}
	all := map[string]NodeReport{"cp": switchedReport("cp"), "w1": switchedReport("w1"), "w2": switchedReport("w2")}
	checkGate(t, decideKubeletsExternal(groups, all), nil, true, false, "3 of 3 planned kubelets run external")

	restored := map[string]NodeReport{"cp": all["cp"], "w1": all["w1"], "w2": restoredReport("w2")}
	checkGate(t, decideKubeletsExternal(groups, restored), nil, false, false,
		"2 of 3", "w2: last report restore, kubelet pid 4242 --cloud-provider=aws healthz ok")

	stale := switchedReport("w2")
	stale.Kubelet.CloudProvider = "aws"
	checkGate(t, decideKubeletsExternal(groups, map[string]NodeReport{"cp": all["cp"], "w1": all["w1"], "w2": stale}), nil, false, false,
		"w2: last report kubelet-external, kubelet pid 4242 --cloud-provider=aws")

	checkGate(t, decideKubeletsExternal(groups, map[string]NodeReport{"cp": all["cp"], "w1": all["w1"]}), nil, false, false, "w2: no report")
}
