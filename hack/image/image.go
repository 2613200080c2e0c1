package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// spec is everything that determines the image. Equal specs give equal
// digests.
type spec struct {
	Binary []byte // the static CCM binary for Platform
	// ECRCredentialProvider is the static ecr-credential-provider for
	// Platform, which its DaemonSet copies onto the nodes.
	ECRCredentialProvider []byte
	// Awsccmctl is the static CLI for Platform, which the migration's
	// node-step Pods run.
	Awsccmctl []byte
	CABundle  []byte      // PEM roots written to caBundlePath
	Platform  v1.Platform // OS and Architecture (and Variant, if any)
	Version   string      // org.opencontainers.image.version
	Revision  string      // org.opencontainers.image.revision
	Created   time.Time   // config created time and every file's mtime
	Format    string      // formatOCI or formatDocker: selects media types
}

// buildImage assembles the one-layer image on scratch.
func buildImage(s spec) (v1.Image, error) {
	manifestMT, configMT, layerMT := types.OCIManifestSchema1, types.OCIConfigJSON, types.OCILayer
	if s.Format == formatDocker {
		manifestMT, configMT, layerMT = types.DockerManifestSchema2, types.DockerConfigJSON, types.DockerLayer
	}
	created := s.Created.UTC()

	raw, err := layerTar(rootfs(s.Binary, s.ECRCredentialProvider, s.Awsccmctl, s.CABundle), created)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(
		func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(raw)), nil },
		tarball.WithMediaType(layerMT),
		tarball.WithCompressionLevel(gzip.BestCompression),
		tarball.WithCompressedCaching,
	)
	if err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}

	base := mutate.ConfigMediaType(mutate.MediaType(empty.Image, manifestMT), configMT)
	img, err := mutate.Append(base, mutate.Addendum{
		Layer: layer,
		History: v1.History{
			Created:   v1.Time{Time: created},
			CreatedBy: "hack/image",
			Comment:   "aws-cloud-controller-manager, ecr-credential-provider, awsccmctl, CA roots, nonroot user",
		},
	})
	if err != nil {
		return nil, fmt.Errorf("append layer: %w", err)
	}

	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	cf = cf.DeepCopy()
	cf.Created = v1.Time{Time: created}
	cf.OS = s.Platform.OS
	cf.Architecture = s.Platform.Architecture
	cf.Variant = s.Platform.Variant
	cf.Config = v1.Config{
		User:       fmt.Sprintf("%d:%d", nonrootUID, nonrootGID),
		Entrypoint: []string{entrypoint},
		Env:        []string{"SSL_CERT_FILE=" + caBundlePath},
		WorkingDir: "/",
		Labels: map[string]string{
			labelSource:   sourceURL,
			labelVersion:  s.Version,
			labelRevision: s.Revision,
		},
	}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, fmt.Errorf("set config: %w", err)
	}
	return img, nil
}
