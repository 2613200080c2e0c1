# Sourced by hack/build.sh and hack/image.sh: the version stamp of the
# binaries, one definition for both.
#   VERSION  git describe, as vX.Y.Z[-...] (v0.0.0-<commit> when untagged)
#   COMMIT   the full commit
#   LDFLAGS  -s -w and the -X flags: awsccmctl's internal/version, and
#            k8s.io/component-base/version, which the CCM's --version and
#            its /version endpoint print (as upstream stamps it).
VERSION=$(git describe --tags --always --dirty 2>/dev/null || echo dev)
# Kubernetes' component-base refuses a version that is not vX.Y.Z[...] (the
# CCM panics at start): an untagged commit becomes v0.0.0-<commit>.
case "$VERSION" in
v[0-9]*.[0-9]*.[0-9]*) ;;
*) VERSION="v0.0.0-$VERSION" ;;
esac
COMMIT=$(git rev-parse HEAD 2>/dev/null || echo unknown)
LDFLAGS="-s -w"
LDFLAGS="$LDFLAGS -X github.com/awsccmctl/awsccmctl/internal/version.gitVersion=$VERSION"
LDFLAGS="$LDFLAGS -X github.com/awsccmctl/awsccmctl/internal/version.gitCommit=$COMMIT"
LDFLAGS="$LDFLAGS -X k8s.io/component-base/version.gitVersion=$VERSION"
LDFLAGS="$LDFLAGS -X k8s.io/component-base/version.gitCommit=$COMMIT"
if git diff --quiet HEAD 2>/dev/null; then
	LDFLAGS="$LDFLAGS -X k8s.io/component-base/version.gitTreeState=clean"
else
	LDFLAGS="$LDFLAGS -X k8s.io/component-base/version.gitTreeState=dirty"
fi
