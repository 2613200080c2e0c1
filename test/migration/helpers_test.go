package migration

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// readTree reads every file under root except the static-Pod runner's logs.
func readTree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		// What a running kubelet keeps under /var/lib/kubelet (the
		// certificates it makes, its checkpoints, Pod folders and
		// sockets) is its own, not the tool's: of that folder only the
		// files the tool reads and edits count.
		inKubeletDir := filepath.Dir(rel) == filepath.Join("var", "lib", "kubelet")
		if d.IsDir() {
			if rel == filepath.Join("var", "log") || inKubeletDir {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || (inKubeletDir && d.Name() != "config.yaml" && d.Name() != "kubeadm-flags.env") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[rel] = string(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func treeDiff(want, got map[string]string) string {
	var d []string
	for k, v := range want {
		if g, ok := got[k]; !ok {
			d = append(d, "missing "+k)
		} else if g != v {
			d = append(d, "changed "+k)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			d = append(d, "extra "+k)
		}
	}
	sort.Strings(d)
	return strings.Join(d, ", ")
}

// countCalls counts the calls in [from, to) that match.
func countCalls(log []awsemu.Call, from, to time.Time, match func(awsemu.Call) bool) int {
	n := 0
	for _, c := range log {
		if !c.Time.Before(from) && c.Time.Before(to) && match(c) {
			n++
		}
	}
	return n
}

// summaryCalls tabulates the calls by SDK, before and after cut.
func summaryCalls(log []awsemu.Call, start, cut time.Time) string {
	type key struct{ when, sdk, action string }
	counts := map[key]int{}
	for _, c := range log {
		if c.Time.Before(start) {
			continue
		}
		when := "before cut-over"
		if !c.Time.Before(cut) {
			when = "after cut-over"
		}
		sdk := "other"
		switch {
		case c.SDKv1():
			sdk = "in-tree (aws-sdk-go v1)"
		case c.SDKv2():
			sdk = "CCM (aws-sdk-go-v2)"
		}
		counts[key{when, sdk, c.Service + ":" + c.Action}]++
	}
	keys := make([]key, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.when != b.when {
			return a.when > b.when // "before" first
		}
		if a.sdk != b.sdk {
			return a.sdk < b.sdk
		}
		return a.action < b.action
	})
	var b strings.Builder
	b.WriteString("AWS calls since apply started, by SDK:\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "  %-16s %-24s %-48s %d\n", k.when, k.sdk, k.action, counts[k])
	}
	return b.String()
}

// lbInventory is every load balancer's identity in the emulator.
func lbInventory() string {
	var out []string
	for _, lb := range env.aws.ClassicLoadBalancers() {
		out = append(out, "classic "+lb.Name+" "+lb.DNSName)
	}
	for _, lb := range env.aws.NetworkLoadBalancers() {
		out = append(out, "nlb "+lb.ARN+" "+lb.DNSName)
	}
	sort.Strings(out)
	return strings.Join(out, "; ")
}

// findingStatus returns a preflight -o json finding's status.
func findingStatus(report, id string) string {
	var r struct {
		Findings []struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(report), &r); err != nil {
		return "unparsable report"
	}
	for _, f := range r.Findings {
		if f.ID == id {
			return f.Status
		}
	}
	return "absent"
}
