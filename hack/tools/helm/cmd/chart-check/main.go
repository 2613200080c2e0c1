package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// Exit codes: Helm's refusal is the answer tests look for, so it is kept
// apart from a usage mistake or a failure of the checker itself.
const (
	exitOK      = 0
	exitUsage   = 2
	exitRefused = 3
)

// defaultKubeVersion is the Kubernetes version render and lint report to
// the chart (.Capabilities.KubeVersion): the product's minor.
const defaultKubeVersion = "v1.37.0"

const usage = `usage:
  chart-check render --chart DIR [--values FILE]... [--set k=v]... --release NAME --namespace NS [--kube-version V]
  chart-check lint --chart DIR [--values FILE]... [--set k=v]... [--namespace NS] [--kube-version V]
  chart-check schema --chart DIR [--values FILE]... [--set k=v]...
  chart-check install|upgrade --chart DIR --release NAME --namespace NS --kubeconfig FILE [--values FILE]... [--set k=v]... [--take-ownership] [--wait] [--timeout D]
  chart-check uninstall --release NAME --namespace NS --kubeconfig FILE [--wait] [--timeout D]`

// options are every subcommand's flags; each subcommand reads its own.
type options struct {
	chart         string
	valueFiles    stringList
	sets          stringList
	release       string
	namespace     string
	kubeVersion   string
	kubeconfig    string
	wait          bool
	takeOwnership bool
	timeout       time.Duration
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

// usageError is a mistake on the command line.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// refusal is Helm's answer "no": printed as the JSON's error, exit 3.
type refusal struct{ err error }

func (r *refusal) Error() string { return r.err.Error() }
func (r *refusal) Unwrap() error { return r.err }

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, usage)
		return exitUsage
	}
	cmd := args[0]
	opts, err := parseFlags(cmd, args[1:], stderr)
	if err != nil {
		fmt.Fprintf(stderr, "chart-check %s: %v\n%s\n", cmd, err, usage)
		return exitUsage
	}
	logf := func(format string, v ...any) { fmt.Fprintf(stderr, format+"\n", v...) }
	var res any
	switch cmd {
	case "render":
		res, err = render(opts)
	case "lint":
		res, err = lint(opts)
	case "schema":
		res, err = schema(opts)
	case "install":
		res, err = install(opts, logf)
	case "upgrade":
		res, err = upgrade(opts, logf)
	case "uninstall":
		res, err = uninstall(opts, logf)
	}
	var ue *usageError
	if errors.As(err, &ue) || (err != nil && !errors.As(err, new(*refusal))) {
		fmt.Fprintf(stderr, "chart-check %s: %v\n", cmd, err)
		return exitUsage
	}
	out, jerr := json.MarshalIndent(res, "", "  ")
	if jerr != nil {
		fmt.Fprintf(stderr, "chart-check %s: encode the result: %v\n", cmd, jerr)
		return exitUsage
	}
	fmt.Fprintf(stdout, "%s\n", out)
	if err != nil {
		fmt.Fprintf(stderr, "chart-check %s: %v\n", cmd, err)
		return exitRefused
	}
	return exitOK
}

// parseFlags parses cmd's flags and checks the ones it needs.
func parseFlags(cmd string, args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("chart-check "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.chart, "chart", "", "the chart's folder")
	fs.Var(&o.valueFiles, "values", "a values file (repeatable; later files win)")
	fs.Var(&o.sets, "set", "a value as helm's --set takes it, e.g. image.tag=v1 (repeatable; applied after the files)")
	fs.StringVar(&o.release, "release", "", "the release name")
	fs.StringVar(&o.namespace, "namespace", "", "the release namespace")
	fs.StringVar(&o.kubeVersion, "kube-version", defaultKubeVersion, "the Kubernetes version the chart is told (render, lint)")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "the cluster's kubeconfig (install, upgrade, uninstall)")
	fs.BoolVar(&o.takeOwnership, "take-ownership", false, "install: adopt existing objects without Helm's ownership metadata, as helm install --take-ownership")
	fs.BoolVar(&o.wait, "wait", false, "wait for the release's resources to be ready (install, upgrade, uninstall)")
	fs.DurationVar(&o.timeout, "timeout", 5*time.Minute, "how long Helm may take (install, upgrade, uninstall)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	var need []string
	switch cmd {
	case "render":
		need = []string{"chart", "release", "namespace"}
	case "lint", "schema":
		need = []string{"chart"}
	case "install", "upgrade":
		need = []string{"chart", "release", "namespace", "kubeconfig"}
	case "uninstall":
		need = []string{"release", "namespace", "kubeconfig"}
	default:
		return o, fmt.Errorf("unknown subcommand %q", cmd)
	}
	for _, name := range need {
		if fs.Lookup(name).Value.String() == "" {
			return o, fmt.Errorf("--%s is required", name)
		}
	}
	return o, nil
}
