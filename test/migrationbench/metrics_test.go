//go:build linux

package migrationbench

import (
	"bufio"
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
	"time"
)

// apiserverMetrics reads the apiserver's /metrics.
func apiserverMetrics(t *testing.T) []byte {
	t.Helper()
	raw, err := env.admin.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		t.Fatalf("apiserver /metrics: %v", err)
	}
	return raw
}

// apiserverCPU is the apiserver's process_cpu_seconds_total.
func apiserverCPU(t *testing.T) time.Duration {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(apiserverMetrics(t)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "process_cpu_seconds_total "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				t.Fatalf("process_cpu_seconds_total %q: %v", v, err)
			}
			return time.Duration(f * float64(time.Second))
		}
	}
	t.Fatal("the apiserver's /metrics has no process_cpu_seconds_total")
	return 0
}

// responseSizes reads apiserver_response_sizes_sum (bytes of the
// responses before compression) for LIST requests by resource. The
// apiserver counts every client, but the bench lists nothing while it
// measures, so the LISTs are the CLI's. A watch's events are not in it.
func responseSizes(t *testing.T) usage {
	t.Helper()
	out := usage{}
	sc := bufio.NewScanner(bytes.NewReader(apiserverMetrics(t)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), "{")
		if !ok || (name != "apiserver_response_sizes_sum" && name != "apiserver_response_sizes_count") {
			continue
		}
		labels, value, ok := strings.Cut(rest, "} ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			continue
		}
		l := map[string]string{}
		for _, kv := range strings.Split(labels, ",") {
			if k, val, ok := strings.Cut(kv, "="); ok {
				l[k] = strings.Trim(val, `"`)
			}
		}
		if l["verb"] != "LIST" {
			continue
		}
		key := "LIST " + l["resource"]
		e := out[key]
		if name == "apiserver_response_sizes_sum" {
			e.Bytes += int64(v)
			e.Decoded += int64(v)
		} else {
			e.Requests += int64(v)
		}
		out[key] = e
	}
	return out
}
