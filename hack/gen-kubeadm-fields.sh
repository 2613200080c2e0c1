#!/usr/bin/env bash
# Writes the field trees of kubeadm's configuration kinds, from kubeadm's own
# Go types, into DIR (default internal/install/kubeadmconfig/fields), where
# install kubeadm --merge reads them to decode a user's file strictly. The
# types live in k8s.io/kubernetes, which only the hack/tools modules import:
# hack/tools/k8s (v1beta4 and the component configurations) and
# hack/tools/kubeadm135 (v1beta3, removed in kubeadm 1.36).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR=$(realpath -m "${1:-$ROOT/internal/install/kubeadmconfig/fields}")
mkdir -p "$DIR"
(cd "$ROOT/hack/tools/k8s" && go run ./kubeadmfields "$DIR/v1beta4.json")
(cd "$ROOT/hack/tools/kubeadm135" && go run ./kubeadmfields "$DIR/v1beta3.json")
