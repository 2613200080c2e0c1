package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"k8s.io/kops/pkg/featureflag"
)

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }

// Exit codes: invalid input is the answer the tests look for, so it is kept
// apart from a usage mistake or a failure of the checker itself.
const (
	exitValid    = 0
	exitInvalid  = 1
	exitInternal = 2
)

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("kops-check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.String("f", "", `the kops Cluster and its InstanceGroups (YAML, documents separated by "---"); "-" reads stdin`)
	var sets stringList
	fs.Var(&sets, "set", "a `kops edit cluster --set` value, e.g. spec.kubelet.cloudProvider=external (repeatable)")
	if err := fs.Parse(args); err != nil {
		return exitInternal
	}
	if *file == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: kops-check -f cluster.yaml [--set spec.path=value ...]")
		return exitInternal
	}
	data, err := readInput(*file, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "kops-check: %v\n", err)
		return exitInternal
	}

	// kops' AssetBuilder would otherwise resolve every image's digest at its
	// registry: a network call per image, and waits when there is no network.
	featureflag.ParseFlags("-ImageDigest")

	res, err := check(context.Background(), data, sets)
	var invalid *invalidError
	switch {
	case errors.As(err, &invalid):
		res = result{Valid: false, Stage: invalid.stage, Errors: invalid.problems}
		for _, p := range invalid.problems {
			fmt.Fprintf(stderr, "kops-check: %s: %s\n", invalid.stage, p)
		}
	case err != nil:
		fmt.Fprintf(stderr, "kops-check: %v\n", err)
		return exitInternal
	}
	out, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		fmt.Fprintf(stderr, "kops-check: encode the result: %v\n", err)
		return exitInternal
	}
	fmt.Fprintf(stdout, "%s\n", out)
	if !res.Valid {
		return exitInvalid
	}
	return exitValid
}

func readInput(path string, stdin io.Reader) ([]byte, error) {
	if path == "-" {
		return io.ReadAll(stdin)
	}
	return os.ReadFile(path)
}
