// Command ecr-credential-provider is the kubelet's image credential
// provider for Amazon ECR registries and ECR Public. All behaviour lives in
// internal/ecrcredential.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/klog/v2"

	"github.com/awsccmctl/awsccmctl/internal/ecrcredential"
)

func main() {
	// SIGTERM ends `install --wait` (the DaemonSet's container) cleanly.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	cmd := ecrcredential.NewCommand(ecrcredential.Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}, ecrcredential.CommandOptions{})
	err := cmd.ExecuteContext(ctx)
	stop()
	klog.Flush()
	if err != nil {
		fmt.Fprintf(os.Stderr, "ecr-credential-provider: %v\n", err)
		os.Exit(1)
	}
}
