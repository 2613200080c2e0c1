// Command fakecri serves the Kubernetes v1.26 fake CRI (the runtime and
// image services of k8s.io/kubernetes/pkg/kubelet/cri/remote/fake) on a
// unix socket, so that a real kubelet can run in the test bed without a
// container runtime: the kubelet needs a CRI endpoint that answers Version
// and Status (runtime and network ready), and pods it is given "run" here
// without executing anything. It lives in this tools module because the
// product module must not import k8s.io/kubernetes.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/kubernetes/pkg/kubelet/cri/remote/fake"
)

func main() {
	endpoint := flag.String("endpoint", "", "the CRI endpoint to serve, unix:///path/to/socket")
	flag.Parse()
	if *endpoint == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: fakecri --endpoint=unix:///path/to/socket")
		os.Exit(2)
	}
	runtime := fake.NewFakeRemoteRuntime()
	if err := runtime.Start(*endpoint); err != nil {
		fmt.Fprintf(os.Stderr, "fakecri: serve %s: %v\n", *endpoint, err)
		os.Exit(1)
	}
	// In the log: the socket is served from here on.
	fmt.Printf("fakecri: serving %s\n", *endpoint)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	<-stop
	runtime.Stop()
}
