#!/usr/bin/env bash
# Builds upstream's aws-cloud-controller-manager (kubernetes/cloud-provider-aws,
# the published Go module k8s.io/cloud-provider-aws) into _output/upstream/
# for `make bench-compare`. Nothing of upstream's code is committed here: the
# module comes from the Go module proxy.
#
# It is built the way upstream builds its release binary (CGO off, -trimpath,
# -ldflags "-s -w", version stamped) and the way hack/build.sh builds this
# CCM, so RssFile (the mapped binary) compares like with like. A binary whose
# version stamp matches is reused: a warm run costs nothing.
#
# Environment: UPSTREAM_VERSION (default v1.37.0), UPSTREAM_BIN (default
# <repo>/_output/upstream). Prints the binary's path on the last line.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
VERSION=${UPSTREAM_VERSION:-v1.37.0}
BIN=${UPSTREAM_BIN:-$ROOT/_output/upstream}
PKG=k8s.io/cloud-provider-aws/cmd/aws-cloud-controller-manager
OUT=$BIN/aws-cloud-controller-manager
mkdir -p "$BIN"

if [ -x "$OUT" ] && [ "$(cat "$OUT.version" 2>/dev/null)" = "$VERSION" ]; then
	echo "upstream aws-cloud-controller-manager $VERSION: cached" >&2
	echo "$OUT"
	exit 0
fi
echo "upstream aws-cloud-controller-manager $VERSION: building (a few minutes with cold Go caches)" >&2
rm -f "$OUT.version"
# Outside the repository, so that this module's go.mod plays no part.
cd "$BIN"
minor=${VERSION#v1.}
minor=${minor%%.*}
v=k8s.io/component-base/version
GOBIN=$BIN GOFLAGS=-mod=mod CGO_ENABLED=0 go install -trimpath \
	-ldflags "-s -w -X $v.gitVersion=$VERSION -X $v.gitMajor=1 -X $v.gitMinor=$minor -X $v.gitTreeState=clean" \
	"$PKG@$VERSION"
echo "$VERSION" >"$OUT.version"
echo "upstream aws-cloud-controller-manager $VERSION: built" >&2
echo "$OUT"
