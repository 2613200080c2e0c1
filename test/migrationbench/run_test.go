//go:build linux

package migrationbench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"
)

// cliRun is one CLI subprocess measured: its wall time, peak RSS and what
// it sent through the proxy, sampled every second for the busiest
// minute.
type cliRun struct {
	Args   []string
	Took   time.Duration
	MaxRSS int64 // KiB, getrusage's ru_maxrss
	// CPU is the CLI's user and system time; APIServerCPU the
	// apiserver's over the same time (process_cpu_seconds_total: every
	// client's requests, the bench's own writes included).
	CPU, APIServerCPU time.Duration
	Traffic           usage
	// Busiest is the traffic of the busiest 60 s window (the whole run
	// when shorter).
	Busiest traffic
	Output  string
	Err     error
}

// runCLI runs the CLI with args through the proxy and waits for it;
// during is called once the process started.
func runCLI(ctx context.Context, t *testing.T, p *countingProxy, args []string, during func()) *cliRun {
	cmd := exec.CommandContext(ctx, env.ctlBin, args...)
	cmd.Env = append(os.Environ(), append(env.aws.Env().List(), "AWS_REGION="+region)...)
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	r := &cliRun{Args: args}
	before := p.snapshot()
	cpu0 := apiserverCPU(t)
	start := time.Now()
	if r.Err = cmd.Start(); r.Err != nil {
		return r
	}
	stop := make(chan struct{})
	var samples []sample
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			samples = append(samples, sample{time.Now(), p.snapshot().since(before).total()})
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	if during != nil {
		during()
	}
	r.Err = cmd.Wait()
	r.Took = time.Since(start)
	close(stop)
	wg.Wait()
	r.APIServerCPU = apiserverCPU(t) - cpu0
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.MaxRSS = ru.Maxrss
		r.CPU = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	r.Traffic = p.snapshot().since(before)
	samples = append(samples, sample{time.Now(), r.Traffic.total()})
	r.Busiest = busiestMinute(samples)
	r.Output = out.String()
	return r
}

// sample is the CLI's traffic so far at a moment.
type sample struct {
	at  time.Time
	sum traffic
}

// busiestMinute is the most traffic in bytes within any 60 s of samples
// (the whole run when it is shorter).
func busiestMinute(s []sample) traffic {
	var best traffic
	for i := range s {
		j := i
		for j+1 < len(s) && s[j+1].at.Sub(s[i].at) <= time.Minute {
			j++
		}
		d := traffic{Requests: s[j].sum.Requests - s[i].sum.Requests, Bytes: s[j].sum.Bytes - s[i].sum.Bytes, Decoded: s[j].sum.Decoded - s[i].sum.Decoded}
		if d.Decoded > best.Decoded {
			best = d
		}
	}
	return best
}

// perMinute scales a run's traffic to one minute.
func (r *cliRun) perMinute() traffic {
	t := r.Traffic.total()
	m := r.Took.Minutes()
	return traffic{Requests: int64(float64(t.Requests) / m), Bytes: int64(float64(t.Bytes) / m), Decoded: int64(float64(t.Decoded) / m)}
}

// summary says what the run cost; rates adds the per-minute figures
// (meaningless for a run of seconds).
func (r *cliRun) summary(rates bool) string {
	t := r.Traffic.total()
	s := fmt.Sprintf("%.1f s wall, CPU %.1f s, peak RSS %.1f MiB, %d requests and %s through the proxy; the apiserver's CPU meanwhile %.1f s",
		r.Took.Seconds(), r.CPU.Seconds(), float64(r.MaxRSS)/1024, t.Requests, t.bytes(), r.APIServerCPU.Seconds())
	if rates {
		pm := r.perMinute()
		s += fmt.Sprintf("; per minute: %d requests, %s (busiest 60 s: %d requests, %s)", pm.Requests, pm.bytes(), r.Busiest.Requests, r.Busiest.bytes())
	}
	return s
}

// lockedBuffer is a bytes.Buffer both of the child's streams write to.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
