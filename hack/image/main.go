package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

// options are the command's flags.
type options struct {
	binary     string
	ecrBinary  string
	awsccmctl  string
	platform   string
	format     string
	version    string
	revision   string
	epoch      string
	outputDir  string
	repository string
	// binDir, for a multi-platform index, holds each platform's binaries
	// as linux-<arch>/<name> instead of --binary and its siblings.
	binDir string
}

func run(args []string, stdout io.Writer) error {
	o := options{}
	fs := flag.NewFlagSet("image", flag.ContinueOnError)
	fs.StringVar(&o.binary, "binary", "", "static aws-cloud-controller-manager binary for --platform (required)")
	fs.StringVar(&o.ecrBinary, "ecr-credential-provider", "", "static ecr-credential-provider binary for --platform (required)")
	fs.StringVar(&o.awsccmctl, "awsccmctl", "", "static awsccmctl binary for --platform (required)")
	fs.StringVar(&o.platform, "platform", "linux/amd64", "image platform: linux/amd64 or linux/arm64; with --bin-dir a comma-separated list, written as one image index")
	fs.StringVar(&o.binDir, "bin-dir", "", "folder of static binaries as linux-<arch>/{aws-cloud-controller-manager,ecr-credential-provider,awsccmctl}: writes a multi-platform OCI image index over --platform (instead of --binary, --ecr-credential-provider and --awsccmctl)")
	fs.StringVar(&o.format, "format", formatOCI, "archive format: oci (OCI image layout tar) or docker (docker load / kind load image-archive)")
	fs.StringVar(&o.version, "version", "v0.0.0-dev", "version label and tag")
	fs.StringVar(&o.revision, "revision", "unknown", "git commit for the revision label")
	fs.StringVar(&o.epoch, "epoch", os.Getenv("SOURCE_DATE_EPOCH"), "Unix time for file mtimes and the created time (default $SOURCE_DATE_EPOCH, else 0)")
	fs.StringVar(&o.outputDir, "output-dir", "_output/image", "directory for the archive")
	fs.StringVar(&o.repository, "repository", defaultRepository, "image name recorded in the archive")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	return build(o, stdout)
}

// invalidTagChars are the characters a version may hold that a tag may not
// (a tag is [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}).
var invalidTagChars = regexp.MustCompile(`[^A-Za-z0-9_.-]`)

func tagFor(version string) string {
	t := invalidTagChars.ReplaceAllString(version, "-")
	if t == "" || t[0] == '.' || t[0] == '-' {
		t = "v" + t
	}
	if len(t) > 128 {
		t = t[:128]
	}
	return t
}

func build(o options, stdout io.Writer) error {
	if o.binDir != "" {
		return buildIndex(o, stdout)
	}
	var problems []error
	if o.binary == "" {
		problems = append(problems, fmt.Errorf("--binary is required"))
	}
	if o.ecrBinary == "" {
		problems = append(problems, fmt.Errorf("--ecr-credential-provider is required"))
	}
	if o.awsccmctl == "" {
		problems = append(problems, fmt.Errorf("--awsccmctl is required"))
	}
	platform, err := v1.ParsePlatform(o.platform)
	if err != nil {
		problems = append(problems, fmt.Errorf("--platform: %w", err))
	} else if _, ok := elfMachines[platform.Architecture]; platform.OS != "linux" || !ok {
		problems = append(problems, fmt.Errorf("--platform %q: supported are linux/amd64 and linux/arm64", o.platform))
	}
	if o.format != formatOCI && o.format != formatDocker {
		problems = append(problems, fmt.Errorf("--format %q: must be %s or %s", o.format, formatOCI, formatDocker))
	}
	var created time.Time
	if o.epoch == "" {
		created = time.Unix(0, 0)
	} else if secs, err := strconv.ParseInt(o.epoch, 10, 64); err != nil || secs < 0 {
		problems = append(problems, fmt.Errorf("--epoch / SOURCE_DATE_EPOCH %q: want non-negative Unix seconds", o.epoch))
	} else {
		created = time.Unix(secs, 0)
	}
	tag := tagFor(o.version)
	ref, err := name.NewTag(o.repository + ":" + tag)
	if err != nil {
		problems = append(problems, fmt.Errorf("--repository %q: %w", o.repository, err))
	}
	if len(problems) > 0 {
		return fmt.Errorf("%v", problems)
	}

	if err := checkBinary(o.binary, platform.Architecture); err != nil {
		return err
	}
	if err := checkBinary(o.ecrBinary, platform.Architecture); err != nil {
		return err
	}
	if err := checkBinary(o.awsccmctl, platform.Architecture); err != nil {
		return err
	}
	bin, err := os.ReadFile(o.binary)
	if err != nil {
		return err
	}
	ecrBin, err := os.ReadFile(o.ecrBinary)
	if err != nil {
		return err
	}
	ctlBin, err := os.ReadFile(o.awsccmctl)
	if err != nil {
		return err
	}
	roots, included, skipped, err := mozillaRoots()
	if err != nil {
		return err
	}
	img, err := buildImage(spec{
		Binary:                bin,
		ECRCredentialProvider: ecrBin,
		Awsccmctl:             ctlBin,
		CABundle:              roots,
		Platform:              v1.Platform{OS: platform.OS, Architecture: platform.Architecture, Variant: platform.Variant},
		Version:               o.version,
		Revision:              o.revision,
		Created:               created,
		Format:                o.format,
	})
	if err != nil {
		return err
	}
	path := filepath.Join(o.outputDir, fmt.Sprintf("%s-%s-%s.%s.tar", binaryName, tag, platform.Architecture, o.format))
	if err := writeArchive(path, o.format, ref, img, created); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return report(stdout, img, ref, path, included, skipped)
}

func report(w io.Writer, img v1.Image, ref name.Tag, path string, rootsIncluded, rootsSkipped int) error {
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	configName, err := img.ConfigName()
	if err != nil {
		return err
	}
	m, err := img.Manifest()
	if err != nil {
		return err
	}
	var layerBytes int64
	for _, l := range m.Layers {
		layerBytes += l.Size
	}
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "image:   %s\n", ref.Name())
	fmt.Fprintf(w, "digest:  %s\n", digest)
	fmt.Fprintf(w, "id:      %s (config digest)\n", configName)
	fmt.Fprintf(w, "size:    %d bytes compressed layer, %d bytes archive\n", layerBytes, st.Size())
	fmt.Fprintf(w, "roots:   %d Mozilla CA roots (%d with distrust-after constraints left out)\n", rootsIncluded, rootsSkipped)
	fmt.Fprintf(w, "archive: %s\n", path)
	return nil
}
