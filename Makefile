# Thin wrappers over hack/ scripts; the scripts hold the logic.
.PHONY: all build test test-unit bench bench-compare bench-migration lint verify demo demo-up demo-down clean testbed image release

all: build

build: ## Build both binaries into _output/bin
	hack/build.sh

testbed: ## Build the real kube-apiserver and etcd the tests run against
	hack/build-testbed.sh

test: ## Lint, verify, and every unit and integration test (builds the test bed and upstream's CCM for test/upstream first, both cached); what CI runs
	hack/test.sh

test-unit: ## The fast loop: every test that needs no test-bed binaries (go test -short)
	hack/test.sh unit

bench: ## Print AWS-call, latency and memory figures counted at the emulator (this CCM, 1,000 nodes)
	hack/bench.sh

bench-compare: ## The bench on this CCM and upstream v1.37.0 side by side, 100/1,000/5,000 nodes (~40 min)
	hack/bench-compare.sh

bench-migration: ## migrate-from-intree plan and apply through the kubelet steps on 5,000 Nodes: the CLI's time, memory, requests and bytes (BENCH_MIGRATION_NODES)
	hack/bench-migration.sh

lint: ## golangci-lint (gofmt, go vet and .golangci.yml's linters), then deadcode (hack/deadcode.sh)
	hack/lint.sh

verify: ## Fail when generated files (iam/, reference docs) are stale
	hack/verify.sh

demo: ## Run the CCM against a local control plane and AWS emulator
	hack/demo.sh

demo-up: ## The demo, then leave its control plane and emulator running (. _output/demo/env.sh)
	hack/demo.sh up

demo-down: ## Stop what demo-up left running
	hack/demo.sh down

image: ## OCI image tarball into _output/image (PLATFORM=linux/arm64, FORMAT=docker; PLATFORM=linux/amd64,linux/arm64: one image index)
	hack/image.sh

release: ## Reproducible release into _output/release/<version>: tarballs for every platform, SBOMs, SHA256SUMS, the krew manifest, the multi-arch image index (hack/release.sh --verify builds twice and compares)
	hack/release.sh

clean:
	rm -rf _output
