#!/usr/bin/env bash
# Runs the tests.
#
#   hack/test.sh unit   make test-unit: every test that needs no test-bed
#                       binaries (go test -short), for the edit-test loop.
#   hack/test.sh        make test (what CI runs): lint, generated-file
#                       staleness, then every test, the integration suites
#                       against a real kube-apiserver + etcd (built by
#                       hack/build-testbed.sh, reused when cached) included.
#                       With CI set, a missing test bed fails the run.
#
# The race detector runs on the packages whose code or tests are concurrent
# (RACE_PKGS): there it finds bugs; elsewhere it would only make the run
# slower. GOTEST_FLAGS adds flags to every go test.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
start=$(date +%s)
mode=${1:-all}

# Concurrent code: the instance view's batching, the load-balancer reconciler
# behind the service controller's workers, the tagging controller's queue,
# the provider, the emulator, the child-process supervisor, the migration's
# journal heartbeat and guards,
# and the integration suite, which runs the CCM in-process.
RACE_PKGS=(
	./internal/instances/...
	./internal/coalesce/...
	./internal/topology/...
	./internal/lb/...
	./internal/routes/...
	./internal/tagging/...
	./pkg/awscloud/...
	./internal/ccmapp/...
	./internal/childproc/...
	./internal/migrate/...
	./test/awsemu/...
	./test/integration/...
	./test/ipv6/...
	./test/routes/...
)
# Suites that are nothing but test-bed tests (test/release: builds the
# release twice): test-unit leaves them out rather than build them to skip
# every test.
TESTBED_ONLY='/test/(integration|ipv6|routes|rbac|migration|migrationbench|bench|tutorial|upstream|kops|chart|release)$'

race_list=$(go list "${RACE_PKGS[@]}")
all_list=$(go list ./...)
plain_list=$(grep -vxF -f <(echo "$race_list") <<<"$all_list" || true)

gotest() { go test -count=1 ${GOTEST_FLAGS:-} "$@"; }
# hack/benchchart is its own module (gonum/plot stays out of the product's
# go.mod), so ./... does not reach it.
gotest_benchchart() { go -C hack/benchchart test -count=1 ${GOTEST_FLAGS:-} "$@" .; }

case "$mode" in
unit)
	# The emulator's package tests run without the race detector here (a
	# third of the loop's race time; its aws-emulator command's keep it);
	# make test runs them all with it.
	race_list=$(grep -vx "$(go list ./test/awsemu)" <<<"$race_list")
	plain_list=$(printf '%s\n%s\n' "$plain_list" "$(go list ./test/awsemu)")
	# The race and plain sets run side by side, three test binaries each:
	# the short tests spend much of their time waiting (polls, timeouts,
	# loopback round trips), so one links while another waits. The race
	# set's output is printed after the plain set's, not mixed into it.
	race_out=$(mktemp)
	trap 'rm -f "$race_out"' EXIT
	gotest -p 3 -short -race $(grep -vE "$TESTBED_ONLY" <<<"$race_list") >"$race_out" 2>&1 &
	race_pid=$!
	plain_rc=0
	gotest -p 3 -short $(grep -vE "$TESTBED_ONLY" <<<"$plain_list") || plain_rc=$?
	race_rc=0
	wait "$race_pid" || race_rc=$?
	echo "--- with the race detector:"
	cat "$race_out"
	if [ "$plain_rc" -ne 0 ]; then
		echo "make test-unit: the tests without the race detector failed (above)" >&2
	fi
	if [ "$race_rc" -ne 0 ]; then
		echo "make test-unit: the tests with the race detector failed (above)" >&2
	fi
	if [ "$race_rc" -ne 0 ] || [ "$plain_rc" -ne 0 ]; then
		exit 1
	fi
	gotest_benchchart -short
	echo "make test-unit: $(( $(date +%s) - start )) s"
	;;
all)
	hack/build-testbed.sh
	# Upstream's CCM v1.37.0, which test/upstream compares this one with
	# (built once, then reused while its version stamp matches).
	AWS_CCM_UPSTREAM_BINARY=$(hack/build-upstream.sh | tail -n 1)
	export AWS_CCM_UPSTREAM_BINARY
	hack/lint.sh
	hack/verify.sh
	gotest -race -timeout 20m $race_list
	gotest -timeout 20m $plain_list
	gotest_benchchart
	echo "make test: $(( $(date +%s) - start )) s"
	;;
*)
	echo "usage: hack/test.sh [unit|all]" >&2
	exit 2
	;;
esac
