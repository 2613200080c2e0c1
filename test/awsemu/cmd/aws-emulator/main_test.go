package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
)

// TestMain lets the test binary act as the command when re-executed.
func TestMain(m *testing.M) {
	if os.Getenv("AWS_EMULATOR_RUN_MAIN") == "1" {
		os.Args = append([]string{"aws-emulator"}, strings.Fields(os.Getenv("AWS_EMULATOR_ARGS"))...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestServeFixtureAndStopOnSIGTERM(t *testing.T) {
	ready := filepath.Join(t.TempDir(), "url")
	cmd := exec.CommandContext(context.Background(), os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "AWS_EMULATOR_RUN_MAIN=1",
		"AWS_EMULATOR_ARGS=--fixture ../../testdata/demo.yaml --listen 127.0.0.1:0 --imds-instance-id i-0a1b2c3d4e5f60002 --ready-file "+ready)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()

	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("reading banner: %v", err)
	}
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "AWS emulator listening on ")
	if !ok || !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("banner %q", line)
	}
	if b, err := os.ReadFile(ready); err != nil || strings.TrimSpace(string(b)) != url {
		t.Errorf("ready file = %q, %v; want %s", b, err, url)
	}

	cfg, err := config.LoadDefaultConfig(context.Background(), config.WithRegion("us-east-1"),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", "")),
		config.WithSharedConfigFiles([]string{}), config.WithSharedCredentialsFiles([]string{}))
	if err != nil {
		t.Fatal(err)
	}
	client := ec2.NewFromConfig(cfg, func(o *ec2.Options) { o.BaseEndpoint = aws.String(url) })
	out, err := client.DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{InstanceIds: []string{"i-0a1b2c3d4e5f60002"}})
	if err != nil || len(out.Reservations) != 1 {
		t.Fatalf("DescribeInstances: %v", err)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("exit after SIGTERM: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no exit 10s after SIGTERM")
	}
	if _, err := os.Stat(ready); !os.IsNotExist(err) {
		t.Errorf("ready file left behind: %v", err)
	}
}
