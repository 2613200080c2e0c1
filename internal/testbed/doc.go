// Package testbed starts a real control plane (etcd + kube-apiserver) on
// loopback for integration tests and hands back admin client configuration.
//
// The binaries are built by hack/build-testbed.sh into
// <repo>/_output/testbed/bin (override with $TESTBED_BIN). Every process
// listens on 127.0.0.1 only, on ports picked by the kernel, and keeps its
// state, certificates and logs in one directory that Stop removes.
//
// One control plane per test package is the intended use:
//
//	func TestMain(m *testing.M) { os.Exit(testbed.Main(m, nil)) }
//
//	func TestSomething(t *testing.T) {
//		cp := testbed.Get(t) // skips when the binaries are missing and $CI is unset
//		cs := kubernetes.NewForConfigOrDie(cp.Config)
//		...
//	}
//
// Rules (the project's): when the binaries are missing, Main fails (exit 1)
// if $CI is non-empty and otherwise runs the tests with Get skipping them.
// A control plane that fails to start is always a failure.
//
// Things to know about the apiserver as configured here (default admission
// chain, authorization Node,RBAC):
//   - TaintNodesByCondition adds node.kubernetes.io/not-ready:NoSchedule to
//     every new Node; nothing removes it, since no kube-controller-manager runs.
//   - The ServiceAccount admission plugin is on and no controller creates the
//     "default" ServiceAccount, so Pods need an existing serviceAccountName (or
//     pass --disable-admission-plugins=ServiceAccount in ExtraAPIServerFlags).
//   - ExtraAPIServerFlags are appended last: for scalar flags the last value
//     wins, list flags given twice are concatenated.
package testbed
