// Command image builds an OCI image of aws-cloud-controller-manager without
// Docker or a registry: one layer on scratch holding the static binary, the
// static ecr-credential-provider (its DaemonSet copies it onto nodes), a
// CA bundle and passwd/group entries for a non-root user, written as an OCI
// image layout tarball (or a docker-archive with --format=docker).
//
// Everything that goes into the image is fixed by its inputs (the binaries,
// the CA bundle module version, --version, --revision and --epoch), so
// building twice gives the same digest. hack/image.sh compiles the binaries
// and runs this program; `make image` runs hack/image.sh.
package main
