#!/usr/bin/env bash
# Builds the real control-plane binaries the integration tests run against
# (kube-apiserver of the same minor as the client libraries, and etcd; and
# kubeadm, which validates the configuration awsccmctl writes) from the
# Go module proxy, into an ignored cache folder. A binary whose version stamp
# already matches is reused, so a warm run costs a few seconds.
#
# It also builds kube-apiserver and kube-controller-manager of the last minor
# with the in-tree AWS cloud provider (hack/tools/k8s126) into
# $TESTBED_BIN/<version>/, for the migration end-to-end tests, with the
# kubelet of that version and a fake CRI endpoint for it (fakecri); about
# 10 minutes more on 2 cores with cold Go caches. TESTBED_LEGACY=0 skips them
# (the tests that need them then skip, or fail when $CI is set).
#
# And kubeadm of KUBEADM_V1BETA3_VERSION (hack/tools/kubeadm135) into
# $TESTBED_BIN/<version>/kubeadm: the last kubeadm that reads
# kubeadm.k8s.io/v1beta3 (1.36 removed it), with `kubeadm config validate`
# (added in 1.28; the v1.26 above lacks it), to validate the v1beta3
# configuration awsccmctl writes for clusters before 1.31.
#
# And kops-check (hack/tools/kops: kops v1.31.0's own validation and CCM
# add-on, offline) into $TESTBED_BIN/kops-check, for test/kops, which runs
# the plan's kops edits through it. Cold: about 5 minutes on 2 cores and
# 2.8 GB of memory at its peak (kops pulls in every cloud's SDK), so it is
# built last and alone; reused while its stamp (a hash of the tool's go.mod,
# which pins the kops version, go.sum and sources) matches. TESTBED_KOPS=0
# skips it (test/kops then skips, or fails when $CI is set).
#
# And chart-check (hack/tools/helm: the Helm v3 Go library's render, lint,
# schema validation and release actions) into $TESTBED_BIN/chart-check, for
# test/chart. About 2 minutes on 2 cores with cold Go caches.
#
# And the monitoring tools: promop-crds (hack/tools/promop: prometheus-operator
# v0.94.1's ServiceMonitor and PrometheusRule CRDs, embedded in its release;
# seconds) and rule-check (hack/tools/prometheus: Prometheus' rule engine
# evaluating the PrometheusRule over samples scraped from the CCM; 554
# packages, half of promtool's 1,137 as it links no service discovery, yet
# Prometheus' rules package brings its notifier and config, so the cloud
# SDKs of remote-write auth come along: 100 s of CPU with a cold build
# cache, about a minute on 2 idle cores). Each of these is reused while its
# stamp (a hash of the tool's go.mod, go.sum and sources) matches.
# TESTBED_MONITORING=0 skips them (the tests that need them then skip, or
# fail when $CI is set).
#
# Output: $TESTBED_BIN (default: <repo>/_output/testbed/bin)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${TESTBED_BIN:-$ROOT/_output/testbed/bin}
K8S_VERSION=$(sed -n 's/^require k8s.io\/kubernetes \(v.*\)$/\1/p' "$ROOT/hack/tools/k8s/go.mod")
LEGACY_VERSION=$(sed -n 's/^require k8s.io\/kubernetes \(v.*\)$/\1/p' "$ROOT/hack/tools/k8s126/go.mod")
KUBEADM_V1BETA3_VERSION=$(sed -n 's/^require k8s.io\/kubernetes \(v.*\)$/\1/p' "$ROOT/hack/tools/kubeadm135/go.mod")
ETCD_VERSION=$(sed -n 's/^require go.etcd.io\/etcd\/server\/v3 \(v.*\)$/\1/p' "$ROOT/hack/tools/etcd/go.mod")
mkdir -p "$BIN"

# stamp NAME VERSION: true when BIN/NAME was built for VERSION.
stamp_ok() { [ -x "$BIN/$1" ] && [ "$(cat "$BIN/$1.version" 2>/dev/null)" = "$2" ]; }

build_apiserver() {
	if stamp_ok kube-apiserver "$K8S_VERSION"; then
		echo "kube-apiserver $K8S_VERSION: cached"
		return
	fi
	local minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
	local ldf="-s -w"
	for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
		ldf="$ldf -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean -X $p.buildDate=2000-01-01T00:00:00Z"
	done
	echo "kube-apiserver $K8S_VERSION: building (about 5-6 minutes on 2 cores when the Go caches are cold)"
	(cd "$ROOT/hack/tools/k8s" && go build -trimpath -ldflags "$ldf" -o "$BIN/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver)
	echo "$K8S_VERSION" >"$BIN/kube-apiserver.version"
}

build_kubeadm() {
	if stamp_ok kubeadm "$K8S_VERSION"; then
		echo "kubeadm $K8S_VERSION: cached"
		return
	fi
	local minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
	local p=k8s.io/component-base/version
	echo "kubeadm $K8S_VERSION: building (about a minute once kube-apiserver is built)"
	(cd "$ROOT/hack/tools/k8s" && go build -trimpath -ldflags "-s -w -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean" -o "$BIN/kubeadm" k8s.io/kubernetes/cmd/kubeadm)
	echo "$K8S_VERSION" >"$BIN/kubeadm.version"
}

# build_kubeadm_v1beta3: kubeadm of KUBEADM_V1BETA3_VERSION into
# BIN/KUBEADM_V1BETA3_VERSION/kubeadm, stamped like build_kubeadm's.
build_kubeadm_v1beta3() {
	local v=$KUBEADM_V1BETA3_VERSION rel=$KUBEADM_V1BETA3_VERSION/kubeadm
	if stamp_ok "$rel" "$v"; then
		echo "kubeadm $v: cached"
		return
	fi
	local minor=${v#v1.}; minor=${minor%%.*}
	local p=k8s.io/component-base/version
	echo "kubeadm $v: building (a few minutes on 2 cores when the Go caches are cold)"
	mkdir -p "$BIN/$v"
	(cd "$ROOT/hack/tools/kubeadm135" && go build -trimpath -ldflags "-s -w -X $p.gitVersion=$v -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean" -o "$BIN/$rel" k8s.io/kubernetes/cmd/kubeadm)
	echo "$v" >"$BIN/$rel.version"
}

# build_legacy NAME [PACKAGE]: NAME (kube-apiserver, kube-controller-manager,
# kubelet) of LEGACY_VERSION, or PACKAGE of hack/tools/k8s126 (./fakecri),
# into BIN/LEGACY_VERSION/NAME, stamped like a release build.
build_legacy() {
	local name=$1 pkg=${2:-k8s.io/kubernetes/cmd/$1} rel=$LEGACY_VERSION/$1
	if stamp_ok "$rel" "$LEGACY_VERSION"; then
		echo "$name $LEGACY_VERSION: cached"
		return
	fi
	local minor=${LEGACY_VERSION#v1.}; minor=${minor%%.*}
	local ldf="-s -w"
	for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
		ldf="$ldf -X $p.gitVersion=$LEGACY_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean -X $p.buildDate=2000-01-01T00:00:00Z"
	done
	echo "$name $LEGACY_VERSION: building (the first of these takes about 6 minutes on 2 cores when the Go caches are cold)"
	mkdir -p "$BIN/$LEGACY_VERSION"
	(cd "$ROOT/hack/tools/k8s126" && go build -trimpath -ldflags "$ldf" -o "$BIN/$rel" "$pkg")
	echo "$LEGACY_VERSION" >"$BIN/$rel.version"
}

# build_tool NAME DIR: hack/tools/DIR's ./cmd/NAME into BIN/NAME, stamped
# with a hash of the module and the command's sources, so an edit of either
# rebuilds it.
build_tool() {
	local name=$1 dir=$ROOT/hack/tools/$2 sum stamp
	sum=$(cd "$dir" && cat go.mod go.sum cmd/"$name"/*.go | sha256sum | cut -c1-12)
	stamp="$2 $name $sum"
	if stamp_ok "$name" "$stamp"; then
		echo "$name ($stamp): cached"
		return
	fi
	echo "$name ($stamp): building"
	(cd "$dir" && go build -trimpath -ldflags "-s -w" -o "$BIN/$name" ./cmd/"$name")
	echo "$stamp" >"$BIN/$name.version"
}

build_etcd() {
	if stamp_ok etcd "$ETCD_VERSION"; then
		echo "etcd $ETCD_VERSION: cached"
		return
	fi
	echo "etcd $ETCD_VERSION: building"
	(cd "$ROOT/hack/tools/etcd" && go build -trimpath -ldflags "-s -w" -o "$BIN/etcd" ./cmd/etcd)
	echo "$ETCD_VERSION" >"$BIN/etcd.version"
}

build_etcd
build_apiserver
build_kubeadm
build_kubeadm_v1beta3
# chart-check (hack/tools/helm): the Helm v3 library renders, lints and
# installs the chart for test/chart (about 2 minutes cold).
build_tool chart-check helm
if [ "${TESTBED_LEGACY:-1}" != 0 ]; then
	build_legacy kube-apiserver
	build_legacy kube-controller-manager
	# A real kubelet and the fake CRI it talks to, for the node side of the
	# migration (internal/testbed/realkubelet): about 3 minutes more warm.
	build_legacy kubelet
	build_legacy fakecri ./fakecri
fi
if [ "${TESTBED_MONITORING:-1}" != 0 ]; then
	build_tool promop-crds promop
	build_tool rule-check prometheus
fi
# Last, after every other build has finished: the largest of them.
if [ "${TESTBED_KOPS:-1}" != 0 ]; then
	build_tool kops-check kops
fi
echo "test bed binaries in $BIN"
