# The MinIO server the S3 tests start. It is built from source with
# `go install`, once, into $(go env GOPATH)/bin.
MINIO_MODULE := github.com/minio/minio@v0.0.0-20260212201848-7aac2a2c5b7c
GOBIN := $(shell go env GOPATH)/bin
export VIADUCT_MINIO ?= $(GOBIN)/minio

.PHONY: build run test test-deps fuzz bench docker

# VERSION is what `viaduct version` prints: git describe of the checkout.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)

build:
	go build -ldflags '$(LDFLAGS)' -o bin/viaduct ./cmd/viaduct

# run: viaduct's main job on embedded defaults against a simulated Source.
run: build
	./bin/viaduct demo

# test-deps installs what the tests need that Go modules do not bring.
# Chromium drives the status page's browser test (node/statuspage_test.go);
# systemd-analyze checks the unit of deploy/systemd (deploy/check).
test-deps:
	@test -x "$(VIADUCT_MINIO)" || { echo "installing MinIO ($(MINIO_MODULE))"; go install $(MINIO_MODULE); }
	@command -v chromium >/dev/null 2>&1 || { echo "installing chromium"; \
		SUDO=$$(test "$$(id -u)" = 0 || echo sudo); \
		$$SUDO apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null; }
	@command -v systemd-analyze >/dev/null 2>&1 || { echo "installing systemd (systemd-analyze)"; \
		SUDO=$$(test "$$(id -u)" = 0 || echo sudo); \
		$$SUDO apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq systemd >/dev/null; }

# test: vet, every test, and short fuzz runs of the document reader and
# of the catalog's packed links.
# The fuzz runs are budgeted in inputs (-fuzztime Nx), not seconds: with a
# duration, Go's fuzz coordinator before 1.27 can report "context deadline
# exceeded" as a failure when the time runs out while a worker is busy
# (go.dev/issue/75804); a count has no deadline to race.
# deploy/check is a module of its own (the loaders of compose, Prometheus,
# Kubernetes and systemd stay out of viaduct's go.mod): it runs apart.
test: test-deps
	go vet ./...
	go test -count=1 -timeout 30m ./...
	cd deploy/check && go vet ./... && go test -count=1 ./...
	@command -v systemd-analyze >/dev/null 2>&1 || echo "deploy/check: SKIPPED: systemd-analyze is not installed, the systemd unit was not checked"
	go test -run '^$$' -fuzz '^FuzzReader$$' -fuzztime 300000x ./resourcesync
	go test -run '^$$' -fuzz '^FuzzScannerMatchesXML$$' -fuzztime 300000x ./resourcesync
	go test -run '^$$' -fuzz '^FuzzPackedLinks$$' -fuzztime 50000x ./catalog

fuzz:
	go test -run '^$$' -fuzz '^FuzzReader$$' -fuzztime 20000000x ./resourcesync
	go test -run '^$$' -fuzz '^FuzzScannerMatchesXML$$' -fuzztime 20000000x ./resourcesync
	go test -run '^$$' -fuzz '^FuzzPackedLinks$$' -fuzztime 5000000x ./catalog

bench:
	go test -run '^$$' -bench . -benchmem ./...

# docker: the container image of deploy/Dockerfile, with the version from git.
docker:
	docker build -f deploy/Dockerfile --build-arg VERSION=$$(git describe --tags --always --dirty) -t viaduct .
