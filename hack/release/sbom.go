package main

import (
	"bytes"
	"crypto/sha256"
	"debug/buildinfo"
	"fmt"
	"net/url"
	"slices"
	"strings"

	cdx "github.com/CycloneDX/cyclonedx-go"
)

// sbomSuffix follows an archive's name in its SBOM's (CycloneDX's
// recommended .cdx.json).
const sbomSuffix = ".cdx.json"

// sbomSpec is the CycloneDX version written: 1.6 is read by the scanners
// in use today (Trivy, Grype, Dependency-Track).
const sbomSpec = cdx.SpecVersion1_6

// sbom returns b's CycloneDX SBOM: the binary as the described component
// (its SHA-256, GOOS/GOARCH and the build settings Go recorded), every
// module linked into it as a library with its go.sum hash, and the Go
// standard library at the toolchain's version. The modules come from the
// binary's own build information (debug/buildinfo), so they are what was
// linked, not what go.mod lists. Nothing is drawn at run time: the serial
// number is derived from the commit and the archive's name, the timestamp
// is the release's epoch.
func (r release) sbom(b binary, content []byte) ([]byte, error) {
	info, err := buildinfo.Read(bytes.NewReader(content))
	if err != nil {
		return nil, fmt.Errorf("read Go build information: %w", err)
	}
	main := cdx.Component{
		BOMRef:  goPURL(info.Main.Path, r.version),
		Type:    cdx.ComponentTypeApplication,
		Name:    b.name,
		Version: r.version,
		// purl's qualifiers, sorted by key as the spec wants.
		PackageURL: goPURL(info.Main.Path, r.version) + "?goarch=" + b.goarch + "&goos=" + b.goos,
		Hashes:     &[]cdx.Hash{{Algorithm: cdx.HashAlgoSHA256, Value: sha256Hex(content)}},
		ExternalReferences: &[]cdx.ExternalReference{
			{Type: cdx.ERTypeVCS, URL: sourceURL + "/commit/" + r.commit},
		},
		Properties: buildProperties(b, info),
	}
	stdlib := cdx.Component{
		BOMRef:     goPURL("stdlib", info.GoVersion),
		Type:       cdx.ComponentTypeLibrary,
		Name:       "stdlib",
		Version:    info.GoVersion,
		PackageURL: goPURL("stdlib", info.GoVersion),
	}
	components := []cdx.Component{stdlib}
	for _, m := range info.Deps {
		if m.Replace != nil {
			m = m.Replace
		}
		c := cdx.Component{
			BOMRef:     goPURL(m.Path, m.Version),
			Type:       cdx.ComponentTypeLibrary,
			Name:       m.Path,
			Version:    m.Version,
			PackageURL: goPURL(m.Path, m.Version),
		}
		if m.Sum != "" {
			// go.sum's h1: hash, which `go mod verify` checks; CycloneDX
			// has no algorithm for it, so it is a property.
			c.Properties = &[]cdx.Property{{Name: "go:module:sum", Value: m.Sum}}
		}
		components = append(components, c)
	}
	slices.SortFunc(components, func(a, b cdx.Component) int { return strings.Compare(a.BOMRef, b.BOMRef) })
	refs := make([]string, 0, len(components))
	for _, c := range components {
		refs = append(refs, c.BOMRef)
	}
	deps := []cdx.Dependency{{Ref: main.BOMRef, Dependencies: &refs}}

	bom := cdx.NewBOM()
	bom.SerialNumber = serialNumber(r.commit, b.archiveName(r.version))
	bom.Metadata = &cdx.Metadata{
		Timestamp: r.created.Format("2006-01-02T15:04:05Z"),
		Tools: &cdx.ToolsChoice{Components: &[]cdx.Component{{
			Type:    cdx.ComponentTypeApplication,
			Name:    "hack/release",
			Version: r.version,
			Group:   info.Main.Path,
		}}},
		Component: &main,
	}
	bom.Components = &components
	bom.Dependencies = &deps

	var out bytes.Buffer
	enc := cdx.NewBOMEncoder(&out, cdx.BOMFileFormatJSON).SetPretty(true).SetEscapeHTML(false)
	if err := enc.EncodeVersion(bom, sbomSpec); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// buildProperties are GOOS/GOARCH and the settings Go recorded in the
// binary (CGO_ENABLED, -trimpath, -ldflags with the version stamp, ...),
// under the go:build: prefix.
func buildProperties(b binary, info *buildinfo.BuildInfo) *[]cdx.Property {
	props := []cdx.Property{{Name: "go:build:GOOS", Value: b.goos}, {Name: "go:build:GOARCH", Value: b.goarch}}
	for _, s := range info.Settings {
		if s.Key == "GOOS" || s.Key == "GOARCH" {
			continue
		}
		props = append(props, cdx.Property{Name: "go:build:" + s.Key, Value: s.Value})
	}
	return &props
}

// goPURL is the package URL of a Go module (purl's golang type): each path
// segment and the version percent-encoded as purl requires (a version's
// "+incompatible" becomes %2Bincompatible).
func goPURL(path, version string) string {
	segs := strings.Split(path, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return "pkg:golang/" + strings.Join(segs, "/") + "@" + strings.ReplaceAll(url.PathEscape(version), "+", "%2B")
}

// serialNumber is a urn:uuid: serial derived from the commit and the
// archive: the same release gives the same serial, another archive or
// commit another. The UUID is SHA-256 based, marked as version 8 (custom)
// and RFC 9562's variant.
func serialNumber(commit, archive string) string {
	h := sha256.Sum256([]byte(commit + "\x00" + archive))
	u := h[:16]
	u[6] = u[6]&0x0f | 0x80
	u[8] = u[8]&0x3f | 0x80
	return fmt.Sprintf("urn:uuid:%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}
