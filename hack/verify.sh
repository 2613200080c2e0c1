#!/usr/bin/env bash
# Fails when generated files are stale: regenerates them into a temporary
# copy and compares.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# check GENERATOR DIR PATTERN: run the generator into a scratch folder and
# compare every file it writes with the committed one in DIR.
check() {
	local gen=$1 dir=$2 pattern=$3 out="$tmp/$2"
	mkdir -p "$out"
	go run "./hack/$gen" "$out"
	for f in "$out"/$pattern; do
		if ! diff -u "$dir/$(basename "$f")" "$f"; then
			echo "$dir/$(basename "$f") is stale: run go run ./hack/$gen" >&2
			exit 1
		fi
	done
}
check gen-iam iam '*.json'
check gen-docs docs/reference '*.md'
# The Helm chart's copies of templates/ and its base data (its _data.tpl,
# values and schema are hand-written; test/chart compares its objects with
# install's).
check gen-chart charts/aws-cloud-controller-manager/templates '*'
# kubeadm's field trees, from kubeadm's own types (the hack/tools modules).
hack/gen-kubeadm-fields.sh "$tmp/kubeadmfields"
if ! diff -ru internal/install/kubeadmconfig/fields "$tmp/kubeadmfields"; then
	echo "internal/install/kubeadmconfig/fields is stale: run hack/gen-kubeadm-fields.sh" >&2
	exit 1
fi
echo "generated files are up to date"
