// Package nodepods plays the kubelet of a test bed node for the Pods the
// apiserver binds to it: `migrate-from-intree apply` can run each node step
// as one Pod per node (spec.nodeName set, hostPID, hostNetwork, the host's
// / mounted at /host, restartPolicy Never), and on the test bed, whose
// nodes are folders with no kubelet, a Runner per node runs those Pods as
// host processes, so the product's Pods, statuses and clean-up are
// exercised against a real apiserver.
//
// # Which Pods
//
// A Runner watches the Pods whose spec.nodeName is its node (an informer
// with that field selector). Mirror Pods (annotation
// kubernetes.io/config.mirror: static Pods, run by internal/testbed/staticpod)
// are left alone. A Pod already Succeeded or Failed when first seen is not
// run again; any other is run once (restartPolicy Never; Always and
// OnFailure are not honoured: the test bed runs node steps).
//
// # From Pod to process
//
// The Pod's first container runs as a process of a host binary, by the
// rules staticpod applies to manifests (staticpod.PlanHostProcess): the
// program is the first word of command + args, after wrappers, whose base
// name is a key of Options.Binaries; the words after it are its arguments,
// each absolute path under a hostPath volume's mountPath rewritten to the
// file under Root (with the host's / at /host, `--root=/host` becomes
// `--root=<Root>`). hostPath volumes are checked or created under Root
// first (staticpod.PrepareHostPaths). The environment is the container's
// literal env then Options.Env, and nothing else; the working directory is
// Root; output goes to LogDir/<namespace>_<pod>.log. hostPID and
// hostNetwork are what a process of the test already has; privileged is
// what the test process has (the chroot of --chroot-systemctl needs root).
// Other containers, init containers, valueFrom env, resources and probes
// are not run or honoured.
//
// A Pod that cannot start (no known program, a hostPath check that fails,
// an exec error) is written Failed at once, its container terminated with
// reason StartError, exit code 128 and a message that says why, as a
// container runtime reports an exec failure (the kubelet would keep a Pod
// with a failed hostPath check Pending with events; failing is clearer in
// a test).
//
// # Status and deletion
//
// Status is written through the status subresource, as the kubelet's
// status manager does: Running with the container running since its start,
// podIP = hostIP = the Node's InternalIP (127.0.0.1 without one), the
// PodScheduled, Initialized, ContainersReady and Ready conditions; then, when
// the process exits, the container terminated with its exit code (128 +
// signal for a signal) and reason Completed or Error, the Pod Succeeded
// (code 0) or Failed. A Pod whose deletionTimestamp is set has its process
// stopped (SIGTERM, then SIGKILL after its grace period capped at
// Options.MaxStopGrace), its terminated status written, and is then
// removed with grace period 0 (UID precondition), as the kubelet finalizes
// a Pod: with no kubelet it would stay Terminating forever. A Pod removed
// outright (grace period 0 by someone else) has its process stopped.
//
// # For tests
//
// Runs lists every Pod taken on with its program, arguments, pid, exit code
// and whether the Runner stopped it; WaitRun waits for one to finish;
// MaxConcurrent is the most processes the Runner ran at once, and a Tally
// shared by the Runners of several nodes counts across them (a rollout's
// max-unavailable). Errors lists apiserver writes that failed. Stop stops
// the processes and leaves the Pods as they are, as a stopped kubelet
// would.
package nodepods
