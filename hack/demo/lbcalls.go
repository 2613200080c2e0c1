package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// lbCallCounts are the emulator's counts of the calls load balancers make:
// every ELB and ELBv2 call and every EC2 call but DescribeInstances.
func lbCallCounts(logPath string) (map[string]int, error) {
	all, err := emulatorCalls(logPath)
	if err != nil {
		return nil, err
	}
	maps.DeleteFunc(all, func(k string, _ int) bool {
		return !strings.HasPrefix(k, "elasticloadbalancing") && (!strings.HasPrefix(k, "ec2:") || k == "ec2:DescribeInstances")
	})
	return all, nil
}

// settleCalls waits until the load-balancer calls have stayed the same
// for a quiet second (the service controller gives no other signal that a
// sync is over) and returns what changed since before.
func (d *demo) settleCalls(ctx context.Context, before map[string]int) (map[string]int, error) {
	const quiet = time.Second
	deadline := time.Now().Add(d.opts.timeout)
	last, err := lbCallCounts(d.emu.LogPath)
	if err != nil {
		return nil, err
	}
	changed := time.Now()
	for time.Since(changed) < quiet {
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the CCM's load-balancer calls did not stop within %s", d.opts.timeout)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		cur, err := lbCallCounts(d.emu.LogPath)
		if err != nil {
			return nil, err
		}
		if !maps.Equal(cur, last) {
			last, changed = cur, time.Now()
		}
	}
	diff := map[string]int{}
	for k, v := range last {
		if n := v - before[k]; n != 0 {
			diff[k] = n
		}
	}
	return diff, nil
}

// showCalls prints one step's call counts: the total and the mutating
// ones on a line, then the calls of each API.
func showCalls(w io.Writer, what string, calls map[string]int) {
	total, mutating := 0, 0
	groups := map[string][]string{}
	for _, k := range slices.Sorted(maps.Keys(calls)) {
		svc, op, _ := strings.Cut(k, ":")
		total += calls[k]
		if !strings.HasPrefix(op, "Describe") {
			mutating += calls[k]
		}
		groups[svc] = append(groups[svc], fmt.Sprintf("%s=%d", op, calls[k]))
	}
	fmt.Fprintf(w, "  %s: %d calls, %d mutating\n", what, total, mutating)
	for _, g := range []struct{ svc, label string }{{"elasticloadbalancing", "ELB:"}, {"elasticloadbalancingv2", "ELBv2:"}, {"ec2", "EC2:"}} {
		if ops := groups[g.svc]; len(ops) > 0 {
			wrapHang(w, "    "+g.label+" ", "      ", strings.Join(ops, " "))
		}
	}
}

func portList(svc *corev1.Service) string {
	var ps []string
	for _, p := range svc.Spec.Ports {
		ps = append(ps, fmt.Sprintf("%s/%d", p.Protocol, p.Port))
	}
	return strings.Join(ps, ",")
}

// boldFor returns a function making s bold when w is a terminal.
func boldFor(w io.Writer) func(string) string {
	if f, ok := w.(*os.File); ok && isTerminal(f) {
		return func(s string) string { return "\033[1m" + s + "\033[0m" }
	}
	return func(s string) string { return s }
}

// wrapHang is wrap with a hanging indent: the first line starts with
// first, the others with rest.
func wrapHang(w io.Writer, first, rest, text string) {
	const width = 110
	line, empty := first, true
	for _, word := range strings.Fields(text) {
		if !empty && len(line)+1+len(word) > width {
			fmt.Fprintln(w, line)
			line, empty = rest, true
		}
		if !empty {
			line += " "
		}
		line, empty = line+word, false
	}
	fmt.Fprintln(w, line)
}
