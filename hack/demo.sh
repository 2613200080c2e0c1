#!/usr/bin/env bash
# Runs the AWS cloud-controller-manager binary against a local control plane
# (real kube-apiserver + etcd) and the AWS emulator, registers Nodes as
# kubelets would, and prints what the CCM did and how many AWS calls it
# made. The logic is in hack/demo (Go); this script only builds and, for
# the tutorial, starts and stops a kept demo.
#
#   hack/demo.sh [ARGS]   make demo: run, report, tear everything down.
#   hack/demo.sh up       make demo-up: the same report, then leave etcd,
#                         kube-apiserver and the emulator running in the
#                         background (the demo's CCM stops) for
#                         docs/getting-started.md; _output/demo/env.sh
#                         points KUBECONFIG and AWS_* at them.
#   hack/demo.sh down     make demo-down: stop a kept demo.
#
# Logs (CCM, emulator, apiserver, etcd) stay in _output/demo afterwards.
# Extra arguments go to the demo program (e.g. --timeout=90s).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
STATE=_output/demo
PIDFILE=$STATE/demo.pid

# running: the kept demo's PID, when one is running.
running() {
	local pid
	pid=$(cat "$PIDFILE" 2>/dev/null) || return 1
	kill -0 "$pid" 2>/dev/null && echo "$pid"
}

down() {
	local pid
	if ! pid=$(running); then
		echo "demo: no kept demo is running" >&2
		rm -f "$PIDFILE"
		return 0
	fi
	kill -TERM "$pid"
	# Teardown stops the children with a grace each; allow for all of them.
	for _ in $(seq 1 120); do
		kill -0 "$pid" 2>/dev/null || { rm -f "$PIDFILE"; echo "demo: stopped" >&2; return 0; }
		sleep 0.25
	done
	echo "demo: pid $pid did not stop within 30s; see $STATE/demo.log" >&2
	return 1
}

build() {
	# Build output goes to stderr so stdout carries only the report.
	hack/build.sh >&2
	# The demo needs etcd and kube-apiserver, not the migration test's
	# v1.26 binaries (10 more minutes cold).
	TESTBED_LEGACY=0 hack/build-testbed.sh >&2
	mkdir -p "$STATE"
	go build -o "$STATE/demo" ./hack/demo
}

demo_args=(--bin-dir _output/bin --fixture test/awsemu/testdata/demo.yaml --state-dir "$STATE")

case "${1:-}" in
down)
	down
	;;
up)
	shift
	if pid=$(running); then
		echo "demo: already running (pid $pid); . $STATE/env.sh to use it, make demo-down to stop it" >&2
		exit 0
	fi
	build
	rm -f "$STATE/env.sh"
	# setsid: the kept demo outlives this script and the terminal's Ctrl-C;
	# its children die with it (Pdeathsig), so stopping it stops them all.
	setsid "$STATE/demo" "${demo_args[@]}" --keep "$@" >"$STATE/report.txt" 2>"$STATE/demo.log" </dev/null &
	echo $! >"$PIDFILE"
	# env.sh is the demo's last write before it waits.
	until [ -s "$STATE/env.sh" ]; do
		if ! kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then
			cat "$STATE/report.txt"
			cat "$STATE/demo.log" >&2
			rm -f "$PIDFILE"
			echo "demo: failed; logs in $STATE" >&2
			exit 1
		fi
		sleep 0.5
	done
	cat "$STATE/report.txt"
	echo "demo: left running (pid $(cat "$PIDFILE")): . $STATE/env.sh to use it; make demo-down to stop it" >&2
	;;
*)
	if pid=$(running); then
		echo "demo: a kept demo is running (pid $pid); make demo-down first" >&2
		exit 1
	fi
	build
	# exec: the demo gets Ctrl-C directly and tears everything down itself.
	exec "$STATE/demo" "${demo_args[@]}" "$@"
	;;
esac
