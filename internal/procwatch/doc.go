// Package procwatch identifies a running process by the TCP port it listens
// on and tells when that very process has exited.
//
// `awsccmctl migrate-from-intree node` runs on a control-plane node as root
// in the host PID and network namespaces. Before it changes
// kube-controller-manager's static Pod manifest it must know which
// kube-controller-manager process is running now (the one listening on its
// secure port), and afterwards prove that this process is gone, so that the
// cluster side can release the leader-election Lease it held without two
// managers ever running the same controllers.
//
// "Gone" is deliberately narrow:
//
//   - A process that is alive but stalled (SIGSTOP, state T or t) is NOT
//     gone. It still believes it holds the lease and resumes acting on it
//     the moment it is continued, so releasing its lease would let two
//     managers run the same controllers.
//   - A zombie (state Z: exited, not yet reaped by its parent) or a dead
//     task (state X) IS gone: it can run no more code.
//   - A PID that now belongs to another process IS gone. A Process carries
//     the start time read when it was identified, and a PID whose start time
//     differs is a different process.
//
// Everything is read through github.com/prometheus/procfs from a proc mount
// point given by the caller ("" means /proc), so tests and chroots can pass
// another. The socket tables read are those of the caller's network
// namespace (<proc>/net is <proc>/self/net).
package procwatch
