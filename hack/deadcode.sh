#!/usr/bin/env bash
# Exported or not, a product function no program calls is dead: deadcode
# (golang.org/x/tools/cmd/deadcode, pinned in hack/tools/deadcode) walks the
# call graph from every main package of the module (the three binaries, the
# demo, the generators and the emulator) and reports the functions of
# cmd/, pkg/ and internal/ none of them reaches. Tests are not roots, so a
# function only tests call is reported too: move it into the test, or call
# the product path the test means to prove. One reached only from a
# harness program (the demo, the generators, the emulator) counts as live.
# internal/testbed is the test bed's own library and is not checked.
#
# hack/deadcode-allow.txt lists the few that stay, each with its reason.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
mains=$(go list -f '{{if eq .Name "main"}}{{.ImportPath}}{{end}}' ./...)
# shellcheck disable=SC2086 # one package path per word
found=$(go tool -modfile="$ROOT/hack/tools/deadcode/go.mod" deadcode \
	-filter '^github.com/awsccmctl/awsccmctl/(cmd|pkg|internal/(?:[^t]|t[^e]|te[^s]|tes[^t]|test[^b]))' $mains |
	sed -E 's/^([^:]+):[0-9]+:[0-9]+: unreachable func: (.*)$/\1 \2/')
allowed=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' -e 's/[[:space:]]*$//' hack/deadcode-allow.txt)
dead=$(comm -23 <(printf '%s\n' "$found" | sed '/^$/d' | sort) <(printf '%s\n' "$allowed" | sort))
if [ -n "$dead" ]; then
	echo "deadcode: product functions no program calls (move them into their tests, delete them, or list them with a reason in hack/deadcode-allow.txt):" >&2
	printf '  %s\n' "$dead" >&2
	exit 1
fi
stale=$(comm -13 <(printf '%s\n' "$found" | sed '/^$/d' | sort) <(printf '%s\n' "$allowed" | sort))
if [ -n "$stale" ]; then
	echo "deadcode: hack/deadcode-allow.txt lists functions that are no longer dead; remove them:" >&2
	printf '  %s\n' "$stale" >&2
	exit 1
fi
