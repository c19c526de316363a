#!/usr/bin/env bash
# Generates src/runtime/protobuf/kubernetes.generated.ts: the protobuf descriptors of the Kubernetes
# types Kruise TS reads as protobuf (pods, nodes and what they hold; runtime.Unknown, WatchEvent,
# Status), compiled by protobufjs from the generated.proto files of k8s.io/api and
# k8s.io/apimachinery at the version hack/protobuf/go.mod names (that of the local control plane),
# and their JSON layout from Go reflection (hack/protobuf). The output is committed: the product
# needs neither Go nor the .proto files at run time. Run it after changing that version.
#
# Cache: ${KRUISE_TS_CACHE:-$HOME/.cache/kruise-ts}/protobuf/k8s-<version>/ — the .proto files
# (from the Go module proxy) and json-layout.json, kept by version so that a second run needs no Go.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
cache=${KRUISE_TS_CACHE:-$HOME/.cache/kruise-ts}

api_version=$(awk '$1=="k8s.io/api"{print $2; exit}' "$here/protobuf/go.mod")
machinery_version=$(awk '$1=="k8s.io/apimachinery"{print $2; exit}' "$here/protobuf/go.mod")
dir="$cache/protobuf/k8s-$api_version"

if [[ ! -f "$dir/json-layout.json" ]]; then
  tmp=$(mktemp -d "$cache/protobuf.XXXXXX" 2>/dev/null || { mkdir -p "$cache" && mktemp -d "$cache/protobuf.XXXXXX"; })
  trap 'rm -rf "$tmp"' EXIT
  module_dir() { (cd "$here/protobuf" && GOFLAGS=-mod=mod go mod download -json "$1" | awk -F'"' '/"Dir"/{print $4}'); }
  api=$(module_dir "k8s.io/api@$api_version")
  machinery=$(module_dir "k8s.io/apimachinery@$machinery_version")
  for p in core/v1; do
    mkdir -p "$tmp/k8s.io/api/$p" && cp "$api/$p/generated.proto" "$tmp/k8s.io/api/$p/"
  done
  for p in pkg/apis/meta/v1 pkg/api/resource pkg/runtime pkg/runtime/schema pkg/util/intstr; do
    mkdir -p "$tmp/k8s.io/apimachinery/$p" && cp "$machinery/$p/generated.proto" "$tmp/k8s.io/apimachinery/$p/"
  done
  (cd "$here/protobuf" && GOFLAGS=-mod=mod go run .) > "$tmp/json-layout.json"
  mkdir -p "$(dirname "$dir")"
  rm -rf "$dir" && mv "$tmp" "$dir"
  trap - EXIT
fi

"$root/node_modules/.bin/node" --import tsx "$here/gen-protobuf.ts" "$dir" "$api_version" > "$root/src/runtime/protobuf/kubernetes.generated.ts.tmp"
mv "$root/src/runtime/protobuf/kubernetes.generated.ts.tmp" "$root/src/runtime/protobuf/kubernetes.generated.ts"
"$root/node_modules/.bin/prettier" --write "$root/src/runtime/protobuf/kubernetes.generated.ts" > /dev/null
echo "wrote src/runtime/protobuf/kubernetes.generated.ts (k8s.io/api $api_version)"
