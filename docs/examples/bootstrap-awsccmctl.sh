#!/bin/sh
# Bootstrap a kubeadm node for the external AWS cloud controller manager:
# download awsccmctl from a release, verify it against the release's
# SHA256SUMS before running anything from it, install it, and write the
# node's kubeadm configuration (provider ID and node name from IMDS).
# Runs as EC2 user data (cloud-init runs a user-data script that starts
# with #!) or from any provisioning tool, as root, before `kubeadm join`.
set -eu

# The release to install, and where its files are (a mirror works too).
AWSCCMCTL_VERSION=${AWSCCMCTL_VERSION:-v0.1.0}
RELEASE_URL=${RELEASE_URL:-https://github.com/awsccmctl/awsccmctl/releases/download/$AWSCCMCTL_VERSION}
INSTALL_DIR=${INSTALL_DIR:-/usr/local/bin}
# Where the kubeadm configuration goes; give KUBERNETES_VERSION when kubeadm
# is not on PATH yet (install kubeadm asks it for the version otherwise).
KUBEADM_CONFIG=${KUBEADM_CONFIG:-/etc/kubernetes/ccm-node.yaml}
KUBERNETES_VERSION=${KUBERNETES_VERSION:-}

case "$(uname -m)" in
x86_64 | amd64) arch=amd64 ;;
aarch64 | arm64) arch=arm64 ;;
*) echo "bootstrap: no awsccmctl release for $(uname -m)" >&2; exit 1 ;;
esac
archive="awsccmctl-$AWSCCMCTL_VERSION-linux-$arch.tar.gz"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
curl -fsSL --retry 5 -o "$archive" "$RELEASE_URL/$archive"
curl -fsSL --retry 5 -o SHA256SUMS "$RELEASE_URL/SHA256SUMS"
# The archive must be listed: --ignore-missing alone would accept a
# SHA256SUMS that does not mention it.
grep -q "  $archive\$" SHA256SUMS || { echo "bootstrap: SHA256SUMS does not list $archive" >&2; exit 1; }
sha256sum -c --ignore-missing --quiet SHA256SUMS
tar -xzf "$archive" awsccmctl
install -m 0755 awsccmctl "$INSTALL_DIR/awsccmctl"

mkdir -p "$(dirname "$KUBEADM_CONFIG")"
"$INSTALL_DIR/awsccmctl" install kubeadm --from-imds \
	${KUBERNETES_VERSION:+--kubernetes-version "$KUBERNETES_VERSION"} >"$KUBEADM_CONFIG.tmp"
mv "$KUBEADM_CONFIG.tmp" "$KUBEADM_CONFIG"
echo "bootstrap: awsccmctl $AWSCCMCTL_VERSION installed, $KUBEADM_CONFIG written"
