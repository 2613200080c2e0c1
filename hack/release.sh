#!/usr/bin/env bash
# Builds a release into _output/release/<version>/ (make release): every
# binary cross-compiled static (CGO_ENABLED=0, -trimpath, the version stamp
# of hack/lib/version.sh), then hack/release packs them:
#
#   awsccmctl-<version>-{linux,darwin}-{amd64,arm64}.tar.gz
#   aws-cloud-controller-manager-<version>-linux-{amd64,arm64}.tar.gz
#   ecr-credential-provider-<version>-linux-{amd64,arm64}.tar.gz
#   <archive>.cdx.json       a CycloneDX SBOM per archive
#   awsccm.yaml              the krew plugin manifest over awsccmctl's archives
#   aws-cloud-controller-manager-<tag>.oci.tar
#                            the image (hack/image) as one OCI image index
#                            over linux/amd64 and linux/arm64
#   aws-cloud-controller-manager-<version without v>.tgz
#                            the Helm chart, its version and appVersion stamped
#   SHA256SUMS               over all of the above (sha256sum -c)
#
# The same commit gives the same bytes: archive mtimes, the image's times
# and the SBOMs' timestamp are SOURCE_DATE_EPOCH, else the commit's time.
#
#   hack/release.sh           build the release
#   hack/release.sh --verify  build it twice from two fresh clones of HEAD
#                             (with the working tree's changes) and compare
#                             every file byte for byte (test/release's
#                             TestReleaseReproducible over the whole matrix;
#                             make test runs it over a subset). The second
#                             build starts from an empty Go build cache, so
#                             nothing compiled by the first is reused: a cold
#                             build, some 15 to 25 minutes on 2 cores and a
#                             few GB under TMPDIR; RELEASE_COLD_CACHE=0
#                             shares the cache instead.
#
# RELEASE_TARGETS (name/os/arch, space-separated) builds a subset, and
# RELEASE_IMAGE=0 leaves the image index out (it needs all three binaries
# for linux/amd64 and linux/arm64); RELEASE_DOWNLOAD_URL is where the krew
# manifest says the archives are (default: the GitHub release of <version>).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"

if [ "${1:-}" = "--verify" ]; then
	RELEASE_FULL=1 RELEASE_COLD_CACHE=${RELEASE_COLD_CACHE:-1} \
		exec go test -count=1 -timeout 90m -run 'TestReleaseReproducible' -v ./test/release
elif [ $# -gt 0 ]; then
	echo "usage: hack/release.sh [--verify]" >&2
	exit 2
fi

# VERSION, COMMIT, LDFLAGS
. "$ROOT/hack/lib/version.sh"
EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}
TARGETS=${RELEASE_TARGETS:-"
	awsccmctl/linux/amd64 awsccmctl/linux/arm64 awsccmctl/darwin/amd64 awsccmctl/darwin/arm64
	aws-cloud-controller-manager/linux/amd64 aws-cloud-controller-manager/linux/arm64
	ecr-credential-provider/linux/amd64 ecr-credential-provider/linux/arm64"}
IMAGE=${RELEASE_IMAGE:-1}

OUT=$ROOT/_output/release/$VERSION
BUILD=$ROOT/_output/release-build/$VERSION
# Only this run's files: SHA256SUMS lists the whole folder.
rm -rf "$OUT" "$BUILD"
mkdir -p "$OUT" "$BUILD/bin" "$BUILD/tools"

start=$(date +%s)
for target in $TARGETS; do
	IFS=/ read -r name goos goarch <<<"$target"
	if [ -z "$goarch" ] || [ ! -d "cmd/$name" ]; then
		echo "RELEASE_TARGETS: $target is not <name>/<os>/<arch> of a command under cmd/" >&2
		exit 2
	fi
	# -buildvcs=false: the version stamp is in LDFLAGS; what go would add
	# (vcs.modified, vcs.time) would tie the bytes to the checkout's state.
	CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch go build -trimpath -buildvcs=false \
		-ldflags "$LDFLAGS" -o "$BUILD/bin/$goos-$goarch/$name" "./cmd/$name"
done
echo "compiled $(wc -w <<<"$TARGETS") binaries in $(( $(date +%s) - start )) s"

# The packing tools run here, so they are built for this machine.
GOOS= GOARCH= go build -o "$BUILD/tools/release" ./hack/release
if [ "$IMAGE" = 1 ]; then
	GOOS= GOARCH= go build -o "$BUILD/tools/image" ./hack/image
	"$BUILD/tools/image" --bin-dir "$BUILD/bin" --platform linux/amd64,linux/arm64 \
		--version "$VERSION" --revision "$COMMIT" --epoch "$EPOCH" --output-dir "$OUT"
fi
download=()
if [ -n "${RELEASE_DOWNLOAD_URL:-}" ]; then
	download=(--download-url "$RELEASE_DOWNLOAD_URL")
fi
"$BUILD/tools/release" --bin-dir "$BUILD/bin" --output-dir "$OUT" --chart-dir charts/aws-cloud-controller-manager \
	--version "$VERSION" --commit "$COMMIT" --epoch "$EPOCH" "${download[@]}" >/dev/null
(cd "$OUT" && sha256sum -c --quiet SHA256SUMS)
# The binaries are in the tarballs; the build folder would only double
# the release's size on disk.
rm -rf "$BUILD"
echo "release $VERSION in $OUT ($(( $(date +%s) - start )) s):"
ls -l "$OUT" | tail -n +2
