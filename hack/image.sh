#!/usr/bin/env bash
# Builds an OCI image tarball of aws-cloud-controller-manager without Docker:
# compiles the static binaries (the CCM and ecr-credential-provider, which
# its DaemonSet copies onto nodes) for the target platform (same flags and version
# stamp as hack/build.sh) and runs hack/image, which writes
# _output/image/aws-cloud-controller-manager-<version>-<arch>.<format>.tar.
#
#   hack/image.sh [--platform linux/amd64|linux/arm64] [--format oci|docker]
#   make image PLATFORM=linux/arm64 FORMAT=docker
#   make image PLATFORM=linux/amd64,linux/arm64   one OCI image index over both,
#                         _output/image/aws-cloud-controller-manager-<version>.oci.tar
#
# File mtimes and the created time come from SOURCE_DATE_EPOCH, else the
# commit time, so building the same tree twice gives the same digest.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
PLATFORM=${PLATFORM:-linux/amd64}
FORMAT=${FORMAT:-oci}
while [ $# -gt 0 ]; do
	case "$1" in
	--platform) PLATFORM=$2; shift 2 ;;
	--platform=*) PLATFORM=${1#*=}; shift ;;
	--format) FORMAT=$2; shift 2 ;;
	--format=*) FORMAT=${1#*=}; shift ;;
	*) echo "usage: $0 [--platform linux/amd64|linux/arm64] [--format oci|docker]" >&2; exit 2 ;;
	esac
done
for p in ${PLATFORM//,/ }; do
	case "$p" in
	linux/amd64 | linux/arm64) ;;
	*) echo "unsupported platform $p: use linux/amd64, linux/arm64 or both, comma-separated" >&2; exit 2 ;;
	esac
done

# VERSION, COMMIT, LDFLAGS
. "$ROOT/hack/lib/version.sh"
EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}

OUT=$ROOT/_output/image
# The binaries of each platform in bin/linux-<arch>, as --bin-dir reads them.
mkdir -p "$OUT/bin" "$OUT/tools"
for p in ${PLATFORM//,/ }; do
	ARCH=${p#linux/}
	for cmd in aws-cloud-controller-manager ecr-credential-provider awsccmctl; do
		CGO_ENABLED=0 GOOS=linux GOARCH=$ARCH go build -trimpath -ldflags "$LDFLAGS" \
			-o "$OUT/bin/linux-$ARCH/$cmd" "./cmd/$cmd"
	done
done
# The image tool runs here, so it is built for this machine.
GOOS= GOARCH= go build -o "$OUT/tools/image" ./hack/image
case "$PLATFORM" in
*,*)
	"$OUT/tools/image" --bin-dir "$OUT/bin" --platform "$PLATFORM" --format "$FORMAT" \
		--version "$VERSION" --revision "$COMMIT" --epoch "$EPOCH" --output-dir "$OUT"
	;;
*)
	BIN=$OUT/bin/linux-${PLATFORM#linux/}
	"$OUT/tools/image" --binary "$BIN/aws-cloud-controller-manager" \
		--ecr-credential-provider "$BIN/ecr-credential-provider" --awsccmctl "$BIN/awsccmctl" \
		--platform "$PLATFORM" --format "$FORMAT" --version "$VERSION" --revision "$COMMIT" \
		--epoch "$EPOCH" --output-dir "$OUT"
	;;
esac
