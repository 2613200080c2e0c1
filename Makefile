# Thin wrappers over hack/ scripts; the scripts hold the logic.
.PHONY: all build test bench lint verify demo clean testbed image

all: build

build: ## Build both binaries into _output/bin
	hack/build.sh

testbed: ## Build the real kube-apiserver and etcd the tests run against
	hack/build-testbed.sh

test: ## Run every unit and integration test (builds the test bed first)
	hack/test.sh

bench: ## Print AWS-call, latency and memory figures counted at the emulator
	hack/bench.sh

lint: ## gofmt and go vet
	hack/lint.sh

verify: ## Fail when generated files (iam/, reference docs) are stale
	hack/verify.sh

demo: ## Run the CCM against a local control plane and AWS emulator
	hack/demo.sh

image: ## OCI image tarball into _output/image (PLATFORM=linux/arm64, FORMAT=docker)
	hack/image.sh

clean:
	rm -rf _output
