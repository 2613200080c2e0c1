// Package staticpod plays the kubelet for control-plane static Pods in
// end-to-end tests: it runs components exactly as the manifests in a fake
// node's /etc/kubernetes/manifests say, so that a tool which edits those
// manifests, and cluster-side code which reads the mirror Pods, are
// exercised as on a real node.
//
// A Runner polls the manifest folder under Options.Root (every
// PollInterval, 200 ms by default). Like the kubelet, it reads every
// regular file whose name does not start with a dot (a leftover
// "kube-controller-manager.yaml.bak" runs too, as it would on a node) and
// does not descend into subfolders.
//
// # From manifest to process
//
// Each file is decoded strictly as a v1 Pod (duplicate keys and unknown
// fields are errors: the kubelet would silently drop an unknown field, but
// a tool that writes one has a bug). The component is the first word of a
// container's command + args, not starting with "-", whose base name is a
// known component ("kube-apiserver", "kube-controller-manager",
// "kube-scheduler", "etcd", "cloud-controller-manager",
// "aws-cloud-controller-manager", and every key of Options.Binaries). That
// covers kubeadm's `command: [kube-controller-manager, --flag...]` and
// kops's `/go-runner --log-file=... /usr/local/bin/kube-controller-manager
// --flag...` (the wrapper is dropped: output goes to the log in LogDir).
// Shell scripts (`sh -c "..."`) are not run. A component present in
// Options.Binaries runs as a process of that host binary with the words
// after the component binary as arguments; any other Pod only gets its
// mirror Pod, shown as Running, as if the node ran it.
//
// # Paths
//
// Every absolute path among the arguments (`--flag=/path`, and a word
// `/path` on its own, which covers `--flag /path`) that lies under a
// container volumeMount's mountPath of a hostPath volume is rewritten to
// Root + hostPath + subPath + the rest, as the container would reach the
// node's file. The longest mountPath wins. A path under no mount, or under
// a volume that is not a hostPath (emptyDir, projected...), is left as
// written: it then fails as on a node without that mount (nothing under
// /etc/kubernetes exists on the test machine). Comma-separated lists and
// $(VAR) references are not expanded. PlanHostProcess and
// PrepareHostPaths export these rules for internal/testbed/nodepods, which
// runs the Pods the apiserver binds to a fake node. Before a start, hostPath volumes of
// type DirectoryOrCreate and FileOrCreate are created under Root, and the
// other types are checked; a failed check keeps the Pod from starting (an
// error is recorded and the start retried with back-off), as the kubelet
// does.
//
// The process gets no environment of the test process: only the
// container's literal env values, then Options.Env (later values win). Its
// working directory is Root, and its output is appended to
// LogDir/<namespace>_<pod name>.log, one header line per start.
//
// # Lifecycle
//
// A manifest that appears starts its process. One whose decoded Pod
// changes (a new hash; whitespace and comments do not count, as for the
// kubelet) replaces its mirror Pod first, then stops the old process
// (SIGTERM, then SIGKILL after StopGrace) and starts the new command line.
// A manifest that disappears, or no longer decodes, stops its process and
// deletes its mirror Pod; a decode error is also recorded (Errors). This is
// what the kubelet does: its file source drops a file it cannot decode
// from the set of pods, which kills the pod. A process that exits on its
// own is recorded (Status().Exits) and restarted after a back-off that
// doubles from 250 ms up to MaxBackoff (2 s by default): the kubelet's
// CrashLoopBackOff, scaled down for tests.
//
// # Mirror Pods
//
// With a Client, each manifest has a mirror Pod "<name>-<node name>" in the
// manifest's namespace ("default" when empty): the manifest's metadata and
// spec, spec.nodeName set, a toleration of every NoExecute taint, the
// annotations kubernetes.io/config.hash, kubernetes.io/config.mirror (both
// the Pod's hash here: a hash of its decoded content and the node name,
// not the kubelet's exact value), kubernetes.io/config.source "file" and
// kubernetes.io/config.seen, and an ownerReference to the Node when that
// Node exists. A changed manifest deletes the mirror Pod and creates a new
// one, so readers see the new command line within about a poll interval.
// Status (phase Running, container states, restart count) is written
// through the status subresource on a best-effort basis. At start, mirror
// Pods of this node without a manifest are deleted. Stop leaves the mirror
// Pods in place, as a stopped kubelet does.
package staticpod
