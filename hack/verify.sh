#!/usr/bin/env bash
# Fails when generated files are stale: regenerates them into a temporary
# copy and compares.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/iam"
go run ./hack/gen-iam "$tmp/iam"
for f in "$tmp"/iam/*.json; do
	if ! diff -u "iam/$(basename "$f")" "$f"; then
		echo "iam/$(basename "$f") is stale: run go run ./hack/gen-iam" >&2
		exit 1
	fi
done
mkdir -p "$tmp/ref"
go run ./hack/gen-docs "$tmp/ref"
for f in "$tmp"/ref/*.md; do
	if ! diff -u "docs/reference/$(basename "$f")" "$f"; then
		echo "docs/reference/$(basename "$f") is stale: run go run ./hack/gen-docs" >&2
		exit 1
	fi
done
echo "generated files are up to date"
