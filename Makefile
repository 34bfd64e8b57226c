# object-storage-manager. `make help` lists the targets.

# Tools run from this module's go.mod (`go tool`), so their versions are pinned there.
CONTROLLER_GEN ?= go tool controller-gen
GOLANGCI_LINT ?= go tool -modfile=hack/tools/lint/go.mod golangci-lint

KUSTOMIZE ?= go tool -modfile=$(CURDIR)/hack/tools/kustomize/go.mod kustomize
export KUSTOMIZE

# Release (make image build-installer): what the binaries report as --version, the time every
# timestamp in the images is set to (the last commit's, so rebuilding a commit gives the same
# digests), where it all goes, and the repository the installer names the image in.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
DIST_DIR ?= $(CURDIR)/dist
CHART ?= charts/object-storage-manager
IMAGE_REPOSITORY ?= ghcr.io/object-storage-manager/manager
IMAGE_ARCH ?= $(shell go env GOARCH)
RELEASE_LDFLAGS = -s -w -X github.com/object-storage-manager/object-storage-manager/internal/version.Version=$(VERSION)
RELEASE_BUILD = CGO_ENABLED=0 GOOS=linux GOARCH=$(IMAGE_ARCH) go build -trimpath -buildvcs=false -ldflags '$(RELEASE_LDFLAGS)'

# Servers built from the Go module proxy into bin/ (see hack/tools/build.sh).
BIN_DIR ?= $(CURDIR)/bin
export BIN_DIR

# Debian packages the tests need that Go cannot build: Ceph for the RGW suite, the AWS CLI that
# the backup and restore spec runs as a user's commands would, and the clients the Secret formats
# are checked with, rclone and s3cmd (see hack/deps.sh). restic comes from the Go module proxy
# (make tools): Debian 12's cannot init a repository with a key limited to a prefix.
DEB_PACKAGES ?= ceph-mon ceph-osd radosgw ceph-common awscli rclone s3cmd $(NODE_PACKAGES)

# What make dev's real node runs that Go does not build: runc, the CNI plugins (bridge,
# host-local), iptables for kube-proxy's rules inside the node's network namespace, conntrack.
NODE_PACKAGES ?= runc containernetworking-plugins iptables conntrack

# What make dev builds into bin/ (hack/tools/build.sh): its cluster, and the real node's servers
# (the default, --node=auto); with ARGS=--node=fake, kwok's fake node instead. When the real
# node cannot run, osm-dev builds kwok itself.
DEV_CLUSTER_TOOLS = kube-apiserver kube-controller-manager kube-scheduler kubectl etcd versitygw
DEV_REAL_NODE = $(if $(findstring node=fake,$(ARGS)),,real)
DEV_NODE_TOOLS = $(if $(DEV_REAL_NODE),kubelet kube-proxy containerd containerd-shim-runc-v2 ctr,kwok)

# Go test flags; `make test GOTEST_FLAGS=-run=Contract` narrows a run.
GOTEST_FLAGS ?=

.PHONY: all
all: build

##@ General

.PHONY: help
help: ## Show the targets.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make \033[36m<target>\033[0m\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-15s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) } ' $(MAKEFILE_LIST)

##@ Development

.PHONY: manifests
manifests: ## Generate CRDs, RBAC and webhook configurations from the API types and markers.
	$(CONTROLLER_GEN) rbac:roleName=manager-role crd webhook paths="./..." output:crd:artifacts:config=config/crd/bases
	@# The Helm chart ships the same CRDs, role rules and webhook configurations.
	cp config/crd/bases/*.yaml $(CHART)/crds/
	cp config/rbac/role.yaml config/rbac/leader_election_role.yaml config/rbac/metrics_auth_role.yaml config/rbac/metrics_reader_role.yaml \
		config/rbac/cost_guard_role.yaml config/rbac/cost_admin_role.yaml $(CHART)/files/
	cp config/webhook/manifests.yaml $(CHART)/files/webhooks.yaml

.PHONY: generate
generate: ## Generate DeepCopy methods and the contract API client and server.
	$(CONTROLLER_GEN) object:headerFile="hack/boilerplate.go.txt" paths="./api/..."
	go generate ./internal/contractapi/...

.PHONY: verify-gen
verify-gen: manifests generate ## Fail when generated files differ from what is committed.
	@git diff --exit-code -- api config internal/contractapi $(CHART) || { echo "generated files are stale: run 'make generate manifests' and commit"; exit 1; }
	@test -z "$$(git status --porcelain -- api config internal/contractapi $(CHART))" || { git status --porcelain -- api config internal/contractapi $(CHART); echo "generated files are not committed"; exit 1; }

.PHONY: fmt
fmt: ## Run go fmt.
	go fmt ./...

.PHONY: vet
vet: ## Run go vet.
	go vet ./...

.PHONY: lint
lint: ## Run golangci-lint (pinned in hack/tools/lint/go.mod).
	$(GOLANGCI_LINT) run ./...

.PHONY: deps
deps: ## Install the Debian packages the tests need (Ceph, the AWS CLI, rclone, s3cmd, the real node's runc, CNI plugins, iptables, conntrack), with apt-get as root or sudo; otherwise print the command.
	@hack/deps.sh $(DEB_PACKAGES)

.PHONY: tools
tools: ## Build kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, etcd, versitygw, kwok, restic, the kubelet, kube-proxy and containerd into bin/ (only when missing or re-pinned).
	@hack/tools/build.sh

.PHONY: test
test: deps tools manifests generate ## Run every test: unit, envtest + real S3, contract server, Ceph RGW, kubectl e2e, the install (builds the release, and Helm once).
	@# A package may take longer than go test's 10 minutes: the e2e suite (with the hostile-tenant
	@# suite, which runs alone), and the alert rules' test, which builds promtool on a fresh machine.
	PATH="$(BIN_DIR):$$PATH" go test -timeout 40m ./... $(GOTEST_FLAGS)
	@# The image builder is a module of its own (hack/tools/image), outside ./...
	cd hack/tools/image && go test ./... $(GOTEST_FLAGS)

.PHONY: test-e2e
test-e2e: tools ## Run only the kubectl end-to-end suite against a fresh osm-dev (make test runs it too).
	PATH="$(BIN_DIR):$$PATH" go test ./test/e2e/ -count=1 -timeout 20m -v

.PHONY: test-tenants
test-tenants: tools ## Run only the hostile-tenant suite (issue 47) against a fresh osm-dev; prints one figure line (make test runs it too).
	@# Run in the package directory, so the figure line is printed as it comes.
	cd test/e2e && PATH="$(BIN_DIR):$$PATH" go test -count=1 -timeout 30m -run '^TestTenants$$'

.PHONY: test-install
test-install: tools node-deps ## Run only the install test (as root: the real node): make image build-installer, install.yaml and the Helm chart applied, the manager run as their Pods on osm-dev's real node (builds Helm once).
	OSM_BIN_DIR="$(BIN_DIR)" PATH="$(BIN_DIR):$$PATH" go test ./test/install/ -count=1 -timeout 60m -v

# Size of the fault suite at full scale: make test-faults N=1000 RATE=0.2 RESTARTS=5
N ?= 1000
RATE ?= 0.2
RESTARTS ?= 5
CONTRACTS ?= 10

.PHONY: test-faults
test-faults: tools ## Run the fault suite at full size (N buckets, RATE of calls failed, RESTARTS of the manager); prints one figure line.
	@# Run in the package directory, so the figure line is printed as it comes (the manager's
	@# log is shown only if the test fails).
	cd test/faults && PATH="$(BIN_DIR):$$PATH" OSM_FAULTS_N=$(N) OSM_FAULTS_RATE=$(RATE) OSM_FAULTS_RESTARTS=$(RESTARTS) \
		OSM_FAULTS_CONTRACTS=$(CONTRACTS) go test -count=1 -timeout 120m -run TestNothingLeaksDuplicatesOrWedgesUnderFaults

.PHONY: test-sieve
test-sieve: tools ## Run the sieve at every point: a crash after each write of the manager and of the contract server, stale views, coalesced events (docs/reliability.md); prints one line and a report per divergence (SIEVE=<regexp> narrows it, LABS=3 side by side, S3=rgw on Ceph RGW).
	cd test/faults && PATH="$(BIN_DIR):$$PATH" OSM_SIEVE="$(or $(SIEVE),all)" OSM_SIEVE_LABS="$(LABS)" OSM_SIEVE_S3="$(S3)" \
		go test -count=1 -timeout 150m -run '^TestSieve$$'

.PHONY: test-transitions
test-transitions: tools ## Drive every field of Contract, Bucket, BucketAccess and Application through every change (Acto's way) and check each against a fresh object; prints one line (ONLY=<regexp of fields>, S3=rgw the RGW-only settings on Ceph RGW, docs/reliability.md). make test runs a subset.
	cd test/transitions && PATH="$(BIN_DIR):$$PATH" OSM_TRANSITIONS="$(or $(ONLY),$(if $(S3),,all))" OSM_TRANSITIONS_S3="$(S3)" go test -count=1 -timeout 60m -run '^TestTransitions$$'

.PHONY: test-upgrade
test-upgrade: tools ## Upgrade to this tree from FROM=<revision> (default: each one test/upgrade/from.txt lists, as make test does); prints one line (docs/reliability.md).
	cd test/upgrade && PATH="$(BIN_DIR):$$PATH" OSM_UPGRADE_FROM="$(FROM)" go test -count=1 -timeout 30m -run '^TestUpgradeKeepsWhatRuns$$'

.PHONY: bench
bench: ## Run the benchmarks of the steady-state hot path (ACL and policy comparison per resync).
	go test ./internal/objectstore/ ./internal/bucketpolicy/ -run='^$$' -bench=. -benchmem -count=5

.PHONY: bench-scale
bench-scale: tools ## Measure N Buckets (default 1000) against the servers' own bound and ACK's s3-controller; prints a table and a summary line, rewrites docs/performance.md (ARGS="-ack=off", "-rounds=1", "-cores=split", "-max-concurrent-reconciles=16", ...).
	@# ACK's s3-controller is built here only, from hack/tools/ack-s3 (the first time: about 3 minutes on 2 idle cores, 14 measured with other builds running).
	@hack/tools/build.sh ack-s3-controller
	PATH="$(BIN_DIR):$$PATH" OSM_BIN_DIR="$(BIN_DIR)" go run ./hack/bench/scale -n $(N) $(ARGS)

##@ Build

.PHONY: build
build: ## Build the manager, the contract server and the COSI driver into bin/.
	go build -o $(BIN_DIR)/manager ./cmd/manager
	go build -o $(BIN_DIR)/contract-server ./cmd/contract-server
	go build -o $(BIN_DIR)/cosi-driver ./cmd/cosi-driver

.PHONY: install-plugin
install-plugin: ## Build the kubectl plugin into bin/kubectl-osm; with bin/ on PATH, `kubectl osm` runs it (docs/kubectl-osm.md).
	go build -o $(BIN_DIR)/kubectl-osm ./cmd/kubectl-osm
	@echo 'kubectl osm: put $(BIN_DIR) on PATH (export PATH="$(BIN_DIR):$$PATH"), or copy $(BIN_DIR)/kubectl-osm into a folder on PATH'

.PHONY: image
image: ## Build OCI images of the manager, the contract server and the COSI driver into dist/images/ (no Docker): static, non-root, reproducible.
	@mkdir -p $(abspath $(DIST_DIR))/bin
	$(RELEASE_BUILD) -o $(abspath $(DIST_DIR))/bin/manager ./cmd/manager
	$(RELEASE_BUILD) -o $(abspath $(DIST_DIR))/bin/contract-server ./cmd/contract-server
	$(RELEASE_BUILD) -o $(abspath $(DIST_DIR))/bin/cosi-driver ./cmd/cosi-driver
	cd hack/tools/image && go run . -out $(abspath $(DIST_DIR))/images -version $(VERSION) \
		-created $(SOURCE_DATE_EPOCH) -platform linux/$(IMAGE_ARCH) \
		manager=$(abspath $(DIST_DIR))/bin/manager contract-server=$(abspath $(DIST_DIR))/bin/contract-server \
		cosi-driver=$(abspath $(DIST_DIR))/bin/cosi-driver

.PHONY: build-installer
build-installer: image ## Write dist/install.yaml: CRDs, RBAC, the manager (image pinned by digest), webhooks with self-managed certificates.
	@hack/build-installer.sh $(abspath $(DIST_DIR)) $(IMAGE_REPOSITORY) $(VERSION)

.PHONY: dev
# Ceph is installed only when asked for (ARGS=--s3=rgw); the real node's packages unless
# ARGS=--node=fake, and as root (without root osm-dev runs kwok's fake node).
dev: dev-tools $(if $(findstring rgw,$(ARGS)),deps) $(if $(DEV_REAL_NODE),node-deps) ## Run the whole operator on this machine, rebuilding the manager on save: a cluster (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, a real node: kubelet, containerd, runc in a network namespace of its own, or kwok's fake one where it cannot run or with ARGS=--node=fake), versitygw, contract server, manager (ARGS="--node=fake", "--s3=rgw", "--debug", "--watch=false", "--no-manager", "--cosi", ...).
	go run ./cmd/osm-dev $(ARGS)

.PHONY: dev-tools
dev-tools: ## Build only what make dev needs into bin/ (make tools builds what the tests need as well).
	@hack/tools/build.sh $(DEV_CLUSTER_TOOLS) $(DEV_NODE_TOOLS)

.PHONY: node-deps
node-deps: ## Install the real node's Debian packages (runc, CNI plugins, iptables, conntrack) when running as root.
	@if [ "$$(id -u)" -eq 0 ]; then hack/deps.sh $(NODE_PACKAGES); fi

.PHONY: run
run: manifests generate ## Run the manager against the cluster in KUBECONFIG (pass ARGS="--contract-api-url=...").
	go run ./cmd/manager $(ARGS)

##@ Deployment

.PHONY: install
install: manifests ## Install the CRDs into the cluster in KUBECONFIG.
	kubectl apply --server-side -f config/crd/bases

.PHONY: uninstall
uninstall: manifests ## Remove the CRDs from the cluster in KUBECONFIG.
	kubectl delete --ignore-not-found -f config/crd/bases

##@ Local webhooks

.PHONY: certs
certs: ## Create .certs/ (CA and serving certificate for 127.0.0.1 via mkcert, or a CA made in Go) and config/local/webhook/webhooks.yaml.
	go run ./hack/gencerts -dir .certs -local-webhooks config/local/webhook/webhooks.yaml
