// Command release packs the binaries hack/release.sh cross-compiled into
// the files a release publishes, so that bootstrap scripts, krew and
// supply-chain scanners can trust them:
//
//   - one <name>-<version>-<os>-<arch>.tar.gz per binary and platform,
//     written deterministically (one entry, fixed owner, mode and mtime, a
//     gzip header without name or time);
//   - one CycloneDX JSON SBOM per archive (<archive>.cdx.json), the module
//     list read from the binary's own build information, its serial number
//     and timestamp derived from the commit, not drawn at random;
//   - awsccm.yaml, the krew plugin manifest over the awsccmctl archives;
//   - SHA256SUMS over everything else in the folder, as sha256sum -c reads.
//
// The same binaries, version, commit and epoch give the same bytes: the
// release test builds twice from two checkouts and compares them.
package main
