// Command aws-emulator serves the awsemu AWS emulator (EC2, ELB, ELBv2, IAM, STS, IMDSv2) on
// loopback for scripts, demos and out-of-process tests.
//
//	aws-emulator --fixture test/awsemu/testdata/demo.yaml --listen 127.0.0.1:0 --ready-file /tmp/emu.url
//
// It prints "AWS emulator listening on http://127.0.0.1:PORT" once serving,
// and exits cleanly on SIGINT or SIGTERM. Point clients at it with
// AWS_ENDPOINT_URL_EC2, AWS_ENDPOINT_URL_STS and
// AWS_EC2_METADATA_SERVICE_ENDPOINT set to that URL.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "aws-emulator:", err)
		os.Exit(1)
	}
}

func run() error {
	fixture := flag.String("fixture", "", "YAML fixture `file` (default: empty us-east-1)")
	listen := flag.String("listen", "127.0.0.1:0", "listen `address`")
	imdsInstance := flag.String("imds-instance-id", "", "instance `ID` IMDS answers as (default: fixture's imdsInstanceId, else its first instance)")
	readyFile := flag.String("ready-file", "", "write the base URL to `path` once listening")
	visibility := flag.Duration("visibility-delay", 0, "delay before instances added at run time become visible")
	responseDelay := flag.Duration("response-delay", awsemu.DefaultResponseDelay, "minimum time before answering an API request (see awsemu.Server.SetResponseDelay)")
	verbose := flag.Bool("v", false, "log every request to stderr")
	flag.Parse()
	if flag.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %v", flag.Args())
	}

	var f *awsemu.Fixture
	if *fixture != "" {
		var err error
		if f, err = awsemu.LoadFixture(*fixture); err != nil {
			return err
		}
	}
	srv := awsemu.New(f)
	if *imdsInstance != "" {
		if _, ok := srv.Instance(*imdsInstance); !ok {
			return fmt.Errorf("--imds-instance-id %s: no such instance in the fixture", *imdsInstance)
		}
		srv.SetIMDSInstance(*imdsInstance)
	}
	srv.SetVisibilityDelay(*visibility)
	srv.SetResponseDelay(*responseDelay)
	if *verbose {
		srv.SetLogOutput(os.Stderr)
	}

	l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", *listen)
	if err != nil {
		return err
	}
	url := "http://" + l.Addr().String()
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	serveErr := make(chan error, 1)
	go func() { serveErr <- hs.Serve(l) }()

	if *readyFile != "" {
		if err := writeAtomic(*readyFile, url+"\n"); err != nil {
			_ = hs.Close()
			return err
		}
		defer func() { _ = os.Remove(*readyFile) }()
	}
	fmt.Printf("AWS emulator listening on %s\n", url)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	select {
	case err := <-serveErr:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(shutdownCtx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// writeAtomic writes data so readers never see a partial file.
func writeAtomic(path, data string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".aws-emulator-ready-*")
	if err != nil {
		return err
	}
	if _, err := tmp.WriteString(data); err != nil {
		_ = tmp.Close()
		_ = os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}
