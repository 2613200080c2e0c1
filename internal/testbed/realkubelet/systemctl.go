package realkubelet

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// The node's systemctl is a shell script (a program any tool can run by
// name) that hands each request to the test process over a FIFO: the test
// process starts and stops the kubelet, so that every kubelet is its child
// (and dies with it, childproc's Pdeathsig) whichever process asked. The
// answer comes back in a file named by the request.

// systemctlScript is the node's systemctl; the %[n] are the log, the FIFO,
// the answers' folder and the node's name.
const systemctlScript = `#!/bin/sh
# systemctl of the test bed node %[4]s (internal/testbed/realkubelet): it
# knows kubelet.service only; the test process that runs the node does the
# work.
echo "$*" >> %[1]q
case "$1" in
daemon-reload) exit 0 ;; # the node's unit files are read at each start
start|stop|restart|is-active) ;;
*) echo "systemctl (test bed node %[4]s): unknown verb $1" >&2; exit 1 ;;
esac
case "$2" in
kubelet|kubelet.service) ;;
*) echo "Unit $2 not found." >&2; exit 5 ;;
esac
id=$$
rm -f %[3]q/"$id"
if ! timeout 10 sh -c 'echo "$1 $2" > "$3"' sh "$1" "$id" %[2]q; then
	echo "systemctl (test bed node %[4]s): the test process running the node does not answer" >&2
	exit 1
fi
i=0
while [ ! -e %[3]q/"$id" ]; do
	i=$((i + 1))
	if [ $i -gt 1200 ]; then
		echo "systemctl (test bed node %[4]s): no answer to $1 within 60 s" >&2
		exit 1
	fi
	sleep 0.05
done
read -r code msg < %[3]q/"$id"
rm -f %[3]q/"$id"
if [ "$code" = 0 ]; then
	[ -z "$msg" ] || echo "$msg"
else
	echo "$msg" >&2
fi
exit "$code"
`

// supervisor answers the node's systemctl.
type supervisor struct {
	n       *Node
	fifo    *os.File
	answers string
	done    chan struct{}
	once    sync.Once
}

func startSupervisor(n *Node) (*supervisor, error) {
	s := &supervisor{n: n, answers: filepath.Join(n.Dir, "systemctl.answers"), done: make(chan struct{})}
	fifoPath := filepath.Join(n.Dir, "systemctl.fifo")
	for _, d := range []string{n.SystemctlDir, s.answers} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	if err := syscall.Mkfifo(fifoPath, 0o600); err != nil {
		return nil, fmt.Errorf("systemctl's FIFO: %w", err)
	}
	// Read and write: the open does not wait for a writer, and the reader
	// never sees end of file between two requests.
	f, err := os.OpenFile(fifoPath, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	s.fifo = f
	script := fmt.Sprintf(systemctlScript, n.SystemctlLog, fifoPath, s.answers, n.Name)
	if err := os.WriteFile(n.Systemctl, []byte(script), 0o755); err != nil {
		_ = f.Close()
		return nil, err
	}
	go s.serve()
	return s, nil
}

// serve answers requests ("<verb> <id>") until stop closes the FIFO.
func (s *supervisor) serve() {
	defer close(s.done)
	sc := bufio.NewScanner(s.fifo)
	for sc.Scan() {
		verb, id, ok := strings.Cut(sc.Text(), " ")
		if !ok || id == "" || strings.ContainsAny(id, "/.") {
			continue
		}
		code, msg := s.do(verb)
		answer := filepath.Join(s.answers, id)
		tmp := answer + ".tmp"
		if err := os.WriteFile(tmp, []byte(fmt.Sprintf("%d %s\n", code, msg)), 0o600); err == nil {
			_ = os.Rename(tmp, answer)
		}
	}
}

// do runs one verb on kubelet.service; it returns systemctl's exit code
// and what it prints.
func (s *supervisor) do(verb string) (int, string) {
	n := s.n
	switch verb {
	case "restart":
		if err := n.Restart(); err != nil {
			return 1, oneLine(fmt.Sprintf("Job for kubelet.service failed: %v", err))
		}
	case "start":
		n.mu.Lock()
		defer n.mu.Unlock()
		if n.kubelet == nil || n.kubelet.Exited() {
			n.kubelet = nil
			if err := n.startKubelet(); err != nil {
				return 1, oneLine(fmt.Sprintf("Job for kubelet.service failed: %v", err))
			}
		}
	case "stop":
		n.mu.Lock()
		defer n.mu.Unlock()
		if err := n.stopKubelet(); err != nil {
			return 1, oneLine(err.Error())
		}
	case "is-active":
		if n.PID() == 0 {
			return 3, "inactive"
		}
		return 0, "active"
	default:
		return 1, "unknown verb " + verb
	}
	return 0, ""
}

func oneLine(s string) string { return strings.ReplaceAll(s, "\n", " | ") }

// stop ends serve; a systemctl run afterwards times out saying the test
// process does not answer.
func (s *supervisor) stop() {
	if s == nil {
		return
	}
	s.once.Do(func() {
		_ = s.fifo.Close()
		<-s.done
	})
}
