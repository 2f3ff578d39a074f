#!/usr/bin/env bash
# Installs the code-generation tools at pinned versions into a repo-local bin
# dir, so `make generate` gives the same gen/ on every machine. Idempotent: a
# tool already at its pinned version is not rebuilt. Prints the bin dir.
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=${TOOLS_BIN:-$PWD/.cache/bin}

# Pins. Change a version here and run `make generate`; gen/ records the
# protoc-gen-go and protoc-gen-go-grpc versions in its headers.
BUF_VERSION=v1.75.0
PROTOC_GEN_GO_VERSION=v1.36.12
PROTOC_GEN_GO_GRPC_VERSION=v1.6.2
PROTOC_GEN_GO_VTPROTO_VERSION=v0.6.1-0.20240319094008-0393e58bdf10

mkdir -p "$BIN"

# install PKG VERSION BINARY: go install unless BIN/BINARY was built from
# PKG@VERSION (read back from the binary's embedded build info).
install() {
	local pkg=$1 version=$2 name=$3 have=""
	if [ -x "$BIN/$name" ]; then
		have=$(go version -m "$BIN/$name" 2>/dev/null | awk '$1 == "mod" { print $3; exit }')
	fi
	if [ "$have" = "$version" ]; then
		return 0
	fi
	echo "tools: installing $pkg@$version into $BIN" >&2
	GOBIN="$BIN" GOFLAGS=-mod=mod go install "$pkg@$version"
}

install github.com/bufbuild/buf/cmd/buf "$BUF_VERSION" buf
install google.golang.org/protobuf/cmd/protoc-gen-go "$PROTOC_GEN_GO_VERSION" protoc-gen-go
install google.golang.org/grpc/cmd/protoc-gen-go-grpc "$PROTOC_GEN_GO_GRPC_VERSION" protoc-gen-go-grpc
install github.com/planetscale/vtprotobuf/cmd/protoc-gen-go-vtproto "$PROTOC_GEN_GO_VTPROTO_VERSION" protoc-gen-go-vtproto

echo "$BIN"
