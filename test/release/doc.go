// Package release tests what `make release` publishes the way its users
// meet it: hack/release.sh runs in two fresh clones of the commit under
// test, at two different paths, and every file must come out byte for byte
// the same; SHA256SUMS must verify with sha256sum -c; each SBOM must list
// the modules really linked (k8s.io/client-go at go.mod's version) and the
// binary's own hash; the krew manifest must be a valid plugin manifest
// whose archives and checksums are the release's; the released awsccmctl
// must print the release's version and behave the same as kubectl-awsccm;
// and docs/examples/bootstrap-awsccmctl.sh, the bootstrap script the docs
// show, must download, verify and run `install kubeadm --from-imds` against
// the AWS emulator's IMDS from a loopback HTTP server holding the release,
// and refuse a tampered archive before running anything from it.
//
// make test builds a subset of the matrix (releaseTargets); hack/release.sh
// --verify runs the same test over the whole matrix and the image index
// (RELEASE_FULL=1), the second build with an empty Go build cache
// (RELEASE_COLD_CACHE=1).
package release
