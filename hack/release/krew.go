package main

import (
	"fmt"

	"sigs.k8s.io/yaml"
)

// krewManifestName is the plugin manifest: krew requires the file to be
// named after the plugin, and the plugin's name is what follows `kubectl`.
const krewManifestName = krewPluginName + ".yaml"

// Krew's plugin manifest format (krew's index, v1alpha2).
const (
	krewAPIVersion = "krew.googlecontainertools.github.com/v1alpha2"
	krewKind       = "Plugin"
	krewPluginName = "awsccm"
	// krewBinary is what the archive's awsccmctl is renamed to in krew's
	// store. krew links kubectl-awsccm to it either way; the name makes the
	// binary's own help say `kubectl awsccm` (internal/cli/root).
	krewBinary = "kubectl-" + krewPluginName
)

// KrewPlugin is a krew plugin manifest: the fields krew reads, with their
// YAML names, from its index format.
type KrewPlugin struct {
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`
	Metadata   KrewMetadata   `json:"metadata"`
	Spec       KrewPluginSpec `json:"spec"`
}

// KrewMetadata names the plugin.
type KrewMetadata struct {
	Name string `json:"name"`
}

// KrewPluginSpec describes the plugin and where each platform's archive is.
type KrewPluginSpec struct {
	Version          string         `json:"version"`
	Homepage         string         `json:"homepage,omitempty"`
	ShortDescription string         `json:"shortDescription"`
	Description      string         `json:"description,omitempty"`
	Caveats          string         `json:"caveats,omitempty"`
	Platforms        []KrewPlatform `json:"platforms"`
}

// KrewPlatform is one archive and the os/arch it is for.
type KrewPlatform struct {
	Selector KrewSelector        `json:"selector"`
	URI      string              `json:"uri"`
	SHA256   string              `json:"sha256"`
	Files    []KrewFileOperation `json:"files,omitempty"`
	Bin      string              `json:"bin"`
}

// KrewSelector is the label selector krew matches against the machine's
// os and arch labels.
type KrewSelector struct {
	MatchLabels map[string]string `json:"matchLabels"`
}

// KrewFileOperation copies From (a path in the archive) to To (a path in
// the plugin's folder).
type KrewFileOperation struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// krewArchive is one awsccmctl archive of the release.
type krewArchive struct {
	goos, goarch string
	uri, sha256  string
}

// krewManifest returns the manifest over archives, in their order.
func krewManifest(version string, archives []krewArchive) ([]byte, error) {
	p := KrewPlugin{
		APIVersion: krewAPIVersion,
		Kind:       krewKind,
		Metadata:   KrewMetadata{Name: krewPluginName},
		Spec: KrewPluginSpec{
			Version:          version,
			Homepage:         sourceURL,
			ShortDescription: "Install and migrate to the external AWS cloud controller manager",
			Description: "awsccmctl as a kubectl plugin: preflight checks a cluster on AWS for the external\n" +
				"cloud controller manager, install renders and applies it, and\n" +
				"migrate-from-intree moves a running cluster off the in-tree AWS provider.\n" +
				"`kubectl awsccm` behaves as the awsccmctl command does.\n",
		},
	}
	for _, a := range archives {
		p.Spec.Platforms = append(p.Spec.Platforms, KrewPlatform{
			Selector: KrewSelector{MatchLabels: map[string]string{"os": a.goos, "arch": a.goarch}},
			URI:      a.uri,
			SHA256:   a.sha256,
			Files:    []KrewFileOperation{{From: cliName, To: krewBinary}},
			Bin:      krewBinary,
		})
	}
	b, err := yaml.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("krew manifest: %w", err)
	}
	return b, nil
}
