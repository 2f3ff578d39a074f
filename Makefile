GO ?= go

.PHONY: test test-race bench fuzz vet
test:
	$(GO) test ./...

# One package at a time: the latency and crash tests must not share 2 cores
# and a disk with another package's tests (CI's stalled-peer test failed so).
test-race:
	$(GO) test -race -p 1 ./...

vet:
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go' | grep -v '^gen/'))" || { gofmt -l $$(git ls-files '*.go' | grep -v '^gen/'); echo "gofmt needed"; exit 1; }

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# The reliability tests (crash, stalled peer, store and authority faults) for longer than CI runs them:
# each runs for about SOAK (internal/soak); the other tests run as usual.
SOAK ?= 10m
.PHONY: soak
soak:
	WEFTGATE_SOAK=$(SOAK) $(GO) test -race -timeout 0 -count 1 ./gateway/... ./bridge/...

FUZZTIME ?= 10s
# Short minimisation: a new input found near the end of a short run must not
# outlive -fuzztime (the run then fails with "context deadline exceeded").
FUZZMIN ?= 50x
# .ci/fuzz runs each target, and once more a run that only hit Go 1.26's
# -fuzztime shutdown race (go.dev/issue/75804).
fuzz:
	GO=$(GO) FUZZTIME=$(FUZZTIME) FUZZMIN=$(FUZZMIN) .ci/fuzz

# --- the binary (issue 6) ---
BIN ?= bin/gateway
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
TOOLS_BIN := $(CURDIR)/.cache/bin
STATICCHECK_VERSION ?= v0.8.2
STATICCHECK := $(TOOLS_BIN)/staticcheck

.PHONY: build run lint load
# The load tool's standard scenario: an in-process gateway, 200 peers on 20
# documents, one writer each at 100 commits/s, for 20 s.
load:
	$(GO) run ./cmd/weftload -inprocess -peers 200 -docs 20 -writers 1 -rate 100 -duration 20s

# A static binary, version stamped: what the Dockerfile builds too.
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '-s -w -X main.version=$(VERSION)' -o $(BIN) ./cmd/gateway

# Run on the embedded defaults; pass settings with ARGS='-log-level debug'.
run: build
	./$(BIN) $(ARGS)

# go vet, then staticcheck at its pinned version (installed into .cache/bin
# unless the binary there was built from that version).
lint:
	$(GO) vet ./...
	@have=$$($(GO) version -m $(STATICCHECK) 2>/dev/null | awk '$$1 == "mod" { print $$3; exit }'); \
	if [ "$$have" != "$(STATICCHECK_VERSION)" ]; then \
	  echo "lint: installing staticcheck $(STATICCHECK_VERSION) into $(TOOLS_BIN)"; \
	  GOBIN=$(TOOLS_BIN) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) || exit 1; \
	fi
	$(STATICCHECK) ./...

# The gRPC API: proto/ is the source, gen/ is what `buf generate` makes of
# it (committed, never edited by hand). scripts/tools.sh installs buf and
# the protoc plugins at pinned versions into .cache/bin.
TOOLS_BIN := $(CURDIR)/.cache/bin
BUF := $(TOOLS_BIN)/buf

.PHONY: tools generate check-generated breaking
tools:
	@bash scripts/tools.sh >/dev/null

generate: tools
	$(BUF) lint
	$(BUF) generate

# Regenerates into a temporary directory, so the work tree is never touched,
# and fails when gen/ differs from what proto/ produces.
check-generated: tools
	$(BUF) lint
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	$(BUF) generate -o "$$tmp" && \
	if ! diff -r gen "$$tmp/gen" >"$$tmp/diff"; then \
	  cat "$$tmp/diff"; \
	  echo "check-generated: gen/ is stale against proto/; run 'make generate' and commit gen/"; \
	  exit 1; \
	fi && echo "check-generated: gen/ is up to date"

# Checks proto/ for breaking changes against the main branch, once main has
# an API to break.
breaking: tools
	@if git cat-file -e main:buf.yaml 2>/dev/null && \
	    git ls-tree -r --name-only main -- proto | grep -q '\.proto$$'; then \
	  $(BUF) breaking --against '.git#branch=main'; \
	else \
	  echo "breaking: main has no proto/ yet; skipped"; \
	fi
