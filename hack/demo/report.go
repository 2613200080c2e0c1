package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/awsccmctl/awsccmctl/pkg/awscloud"
)

// report prints the outcome to w: the Nodes, what happened to the special
// ones, and the AWS calls as counted by the emulator and by the CCM.
func (d *demo) report(ctx context.Context, w io.Writer, p progress, took time.Duration) error {
	bold := func(s string) string { return s }
	if f, ok := w.(*os.File); ok && isTerminal(f) {
		bold = func(s string) string { return "\033[1m" + s + "\033[0m" }
	}
	nodes, err := d.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	slices.SortFunc(nodes.Items, func(a, b corev1.Node) int { return strings.Compare(a.Name, b.Name) })

	fmt.Fprintln(w, bold(fmt.Sprintf("Nodes %s after registration (cluster %q, %s):", took.Round(100*time.Millisecond), clusterID, d.fixture.Region)))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  NAME\tPROVIDER-ID\tTYPE\tZONE\tZONE-ID\tINTERNAL-IP\tEXTERNAL-IP\tREADY\tTAINTS*")
	for _, n := range nodes.Items {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", n.Name, dash(n.Spec.ProviderID),
			dash(n.Labels[corev1.LabelInstanceTypeStable]), dash(n.Labels[corev1.LabelTopologyZone]), dash(n.Labels[awscloud.ZoneIDLabel]),
			dash(address(&n, corev1.NodeInternalIP)), dash(address(&n, corev1.NodeExternalIP)), ready(&n), taints(&n))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "  * not shown: node.kubernetes.io/not-ready (set on every new Node; no kube-controller-manager runs here)")
	wrap(w, "  ", "Kubelets named the nodes by "+d.namedBy()+".")

	fmt.Fprintln(w, bold("Lifecycle:"))
	st, tm, un := d.plan.stopped, d.plan.terminated, d.plan.unresolvable
	fmt.Fprintf(w, "  stopped    %s (%s, NotReady): kept, tainted %s:NoSchedule\n", st.name, st.inst.ID, shutdownTaint)
	deleted := "Node deleted"
	if ev := findEvent(ctx, d, tm.name, "DeletingNode"); ev != "" {
		deleted += ` (event DeletingNode: "` + ev + `")`
	}
	fmt.Fprintf(w, "  terminated %s (NotReady): %s\n", tm.name, deleted)
	fmt.Fprintf(w, "  no match   %s: left uninitialized, Warning %s:\n", un.name, p.event.Reason)
	wrap(w, "             ", strconv.Quote(p.event.Message))

	counts, err := emulatorCalls(d.emu.LogPath)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, bold(fmt.Sprintf("AWS calls received by the emulator (%s of CCM uptime):", time.Since(d.ccmStart).Round(time.Second))))
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range counts {
			if !yield(k) {
				return
			}
		}
	})
	var line []string
	for _, k := range keys {
		line = append(line, fmt.Sprintf("%s=%d", k, counts[k]))
	}
	fmt.Fprintln(w, "  "+strings.Join(line, "  "))

	fmt.Fprintln(w, bold(fmt.Sprintf("CCM metrics (https://127.0.0.1:%d/metrics):", d.ccmPort)))
	lines, err := scrapeMetrics(ctx, d.ccmPort, "aws_ccm_api_requests_total", "aws_ccm_api_throttles_total")
	if err != nil {
		fmt.Fprintf(w, "  scrape failed: %v\n", err)
	}
	throttled := false
	for _, l := range lines {
		fmt.Fprintln(w, "  "+l)
		throttled = throttled || strings.HasPrefix(l, "aws_ccm_api_throttles_total")
	}
	if err == nil && !throttled {
		fmt.Fprintln(w, "  aws_ccm_api_throttles_total: no samples (nothing was throttled)")
	}
	return nil
}

// namedBy says how the kubelets named the nodes, grouped by way.
func (d *demo) namedBy() string {
	var ways []string
	names := map[string][]string{}
	for _, n := range d.plan.all() {
		if names[n.how] == nil {
			ways = append(ways, n.how)
		}
		names[n.how] = append(names[n.how], n.name)
	}
	var parts []string
	for _, w := range ways {
		parts = append(parts, w+": "+strings.Join(names[w], ", "))
	}
	return strings.Join(parts, "; ")
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func address(n *corev1.Node, t corev1.NodeAddressType) string {
	for _, a := range n.Status.Addresses {
		if a.Type == t {
			return a.Address
		}
	}
	return ""
}

func ready(n *corev1.Node) string {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return string(c.Status)
		}
	}
	return "Unknown"
}

// taints prints each taint but not-ready as the last part of its key plus
// its effect.
func taints(n *corev1.Node) string {
	var out []string
	for _, t := range n.Spec.Taints {
		if t.Key == corev1.TaintNodeNotReady {
			continue
		}
		key := t.Key[strings.LastIndex(t.Key, "/")+1:]
		out = append(out, key+":"+string(t.Effect))
	}
	return dash(strings.Join(out, ","))
}

// wrap writes text word-wrapped at about 110 columns, each line prefixed.
func wrap(w io.Writer, prefix, text string) {
	const width = 110
	line := prefix
	for _, word := range strings.Fields(text) {
		if len(line) > len(prefix) && len(line)+1+len(word) > width {
			fmt.Fprintln(w, line)
			line = prefix
		}
		if len(line) > len(prefix) {
			line += " "
		}
		line += word
	}
	fmt.Fprintln(w, line)
}

func findEvent(ctx context.Context, d *demo, node, reason string) string {
	evs, err := nodeEvents(ctx, d.kube, node)
	if err != nil {
		return ""
	}
	for _, e := range evs {
		if e.Reason == reason {
			return e.Message
		}
	}
	return ""
}

// emulatorCalls counts the emulator's request log (aws-emulator -v): one
// line "<service> <action> <status> <duration>" per request.
func emulatorCalls(logPath string) (map[string]int, error) {
	f, err := os.Open(logPath)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	counts := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) != 4 {
			continue
		}
		if code, err := strconv.Atoi(fs[2]); err != nil || code < 100 || code > 599 {
			continue
		}
		counts[fs[0]+":"+fs[1]]++
	}
	return counts, sc.Err()
}

// scrapeMetrics reads the CCM's /metrics over https (self-signed serving
// certificate, /metrics allowed without authorization) and keeps the
// sample lines of the named metrics.
func scrapeMetrics(ctx context.Context, port int, names ...string) ([]string, error) {
	client := &http.Client{
		Timeout:   5 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec // G402: the demo's own CCM on loopback, with its self-signed serving certificate
	}
	defer client.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("https://127.0.0.1:%d/metrics", port), nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	var out []string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		for _, n := range names {
			if strings.HasPrefix(l, n+"{") || strings.HasPrefix(l, n+" ") {
				out = append(out, l)
			}
		}
	}
	return out, sc.Err()
}
