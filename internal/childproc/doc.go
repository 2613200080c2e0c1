// Package childproc is the child-process plumbing shared by
// internal/testbed (etcd, kube-apiserver), hack/demo (emulator, CCM) and
// test/bench (CCM): start a child in its own process group, tied to the
// parent's life where the OS allows it, signal that group, check liveness,
// read the tail of a log, and pick a free loopback port.
//
// Start puts the child in a process group of its own (pgid = pid), so that
// SignalGroup reaches the child and anything it forks, and a Ctrl-C at the
// terminal does not reach it directly: the parent decides the order of
// teardown.
//
// On Linux, Start also sets Pdeathsig=SIGKILL so that a parent which
// crashes or is SIGKILLed leaves nothing behind. Pdeathsig fires when the
// *thread* that forked the child exits, not when the process does, and the
// Go runtime ends an OS thread whenever a goroutine locked to it exits (and
// may retire idle threads). So every child is forked from one dedicated
// goroutine that locks itself to its thread and never unlocks or returns:
// that thread lives exactly as long as the process. Pdeathsig covers the
// direct child only; grandchildren are reached by SignalGroup during an
// orderly stop.
//
// Elsewhere on Unix there is no Pdeathsig: a parent killed outright may
// leave children running. Outside Unix there are no process groups:
// SignalGroup kills the process itself.
package childproc
