package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

// options are the command's flags.
type options struct {
	binDir      string
	outputDir   string
	chartDir    string
	version     string
	commit      string
	epoch       string
	downloadURL string
}

func run(args []string, stdout io.Writer) error {
	o := options{}
	fs := flag.NewFlagSet("release", flag.ContinueOnError)
	fs.StringVar(&o.binDir, "bin-dir", "", "folder of the built binaries, as <os>-<arch>/<name> (required)")
	fs.StringVar(&o.chartDir, "chart-dir", "", "the Helm chart to package, stamped with --version (optional)")
	fs.StringVar(&o.outputDir, "output-dir", "", "folder the release files are written to (required)")
	fs.StringVar(&o.version, "version", "", "release version, vX.Y.Z[-...] (required)")
	fs.StringVar(&o.commit, "commit", "", "git commit the binaries were built from (required)")
	fs.StringVar(&o.epoch, "epoch", os.Getenv("SOURCE_DATE_EPOCH"), "Unix time for archive mtimes and the SBOMs' timestamp (default $SOURCE_DATE_EPOCH)")
	fs.StringVar(&o.downloadURL, "download-url", "", "where the archives will be downloaded from, for the krew manifest (default "+defaultDownloadURL+"<version>)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	r, err := o.complete()
	if err != nil {
		return err
	}
	files, err := r.write()
	if err != nil {
		return err
	}
	for _, f := range files {
		fmt.Fprintln(stdout, f)
	}
	return nil
}

// complete checks the flags and turns them into a release.
func (o options) complete() (release, error) {
	var problems []error
	for _, req := range []struct{ name, value string }{
		{"--bin-dir", o.binDir}, {"--output-dir", o.outputDir}, {"--version", o.version}, {"--commit", o.commit},
	} {
		if req.value == "" {
			problems = append(problems, fmt.Errorf("%s is required", req.name))
		}
	}
	if o.version != "" && !strings.HasPrefix(o.version, "v") {
		problems = append(problems, fmt.Errorf("--version %q: want vX.Y.Z[-...]", o.version))
	}
	created := time.Unix(0, 0).UTC()
	if o.epoch == "" {
		problems = append(problems, errors.New("--epoch or SOURCE_DATE_EPOCH is required: the archives' mtimes must not be the build's time"))
	} else if secs, err := strconv.ParseInt(o.epoch, 10, 64); err != nil || secs < 0 {
		problems = append(problems, fmt.Errorf("--epoch / SOURCE_DATE_EPOCH %q: want non-negative Unix seconds", o.epoch))
	} else {
		created = time.Unix(secs, 0).UTC()
	}
	if len(problems) > 0 {
		return release{}, errors.Join(problems...)
	}
	url := o.downloadURL
	if url == "" {
		url = defaultDownloadURL + o.version
	}
	return release{binDir: o.binDir, outputDir: o.outputDir, chartDir: o.chartDir, version: o.version, commit: o.commit,
		created: created, downloadURL: strings.TrimSuffix(url, "/")}, nil
}
