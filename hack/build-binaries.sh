#!/usr/bin/env bash
# Builds the upstream binaries of the local control plane from the Go module proxy and caches them
# outside the clone, keyed by version, so that warm runs skip the build entirely.
#
#   hack/build-binaries.sh            build what is missing, print the bin dir per component
#   hack/build-binaries.sh --print    only print the cache dirs (exit 1 if any is missing)
#   hack/build-binaries.sh --kubelet [--print]
#                                     the kubelet of the same k8s.io/kubernetes version, for real nodes
#                                     (`kruise cluster up --real-nodes N`); built on demand
#   hack/build-binaries.sh --helm [--print]
#                                     the Helm CLI (hack/helm) that lints, renders and installs
#                                     charts/kruise-ts; built on demand by the chart tests
#   hack/build-binaries.sh --peer [--print]
#                                     the same for OpenKruise's kruise-manager (hack/kruise-peer), the
#                                     upstream peer of differential tests; test-only, built on demand
#   hack/build-binaries.sh --e2e [--print]
#                                     OpenKruise's own e2e suite (hack/kruise-e2e) as one test binary,
#                                     e2e.test; test-only, built on demand (bench/upstream-e2e.ts)
#
# Cache: ${KRUISE_TS_CACHE:-$HOME/.cache/kruise-ts}/bin/<component>-<version>/
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${KRUISE_TS_CACHE:-$HOME/.cache/kruise-ts}

k8s_version=$(awk '/^require k8s.io\/kubernetes /{print $3}' "$here/k8s/go.mod")
etcd_version=$(awk '$1=="go.etcd.io/etcd/server/v3"{print $2; exit}' "$here/etcd/go.mod")
kwok_version=$(awk '$1=="sigs.k8s.io/kwok"{print $2; exit}' "$here/kwok/go.mod")

helm_version=$(awk '$1=="helm.sh/helm/v3"{print $2; exit}' "$here/helm/go.mod")
kruise_version=$(awk '$1=="github.com/openkruise/kruise"{print $2; exit}' "$here/kruise-peer/go.mod")

k8s_dir="$cache/bin/kubernetes-$k8s_version"
kruise_dir="$cache/bin/kruise-$kruise_version"
e2e_version=$(awk '$1=="github.com/openkruise/kruise"{print $2; exit}' "$here/kruise-e2e/go.mod")
e2e_dir="$cache/bin/kruise-e2e-$e2e_version"
etcd_dir="$cache/bin/etcd-$etcd_version"
kwok_dir="$cache/bin/kwok-$kwok_version"

complete() { # dir binaries...
  local dir=$1; shift
  for b in "$@"; do [[ -x "$dir/$b" ]] || return 1; done
}

kubelet_dir="$cache/bin/kubelet-$k8s_version"
helm_dir="$cache/bin/helm-$helm_version"

helm=0
if [[ "${1:-}" == "--helm" ]]; then helm=1; shift; fi
peer=0
if [[ "${1:-}" == "--peer" ]]; then peer=1; shift; fi
kubelet=0
if [[ "${1:-}" == "--kubelet" ]]; then kubelet=1; shift; fi
e2e=0
if [[ "${1:-}" == "--e2e" ]]; then e2e=1; shift; fi

if [[ $e2e == 1 && "${1:-}" == "--print" ]]; then
  echo "e2e=$e2e_dir"
  complete "$e2e_dir" e2e.test
  exit $?
fi

if [[ $kubelet == 1 && "${1:-}" == "--print" ]]; then
  echo "kubelet=$kubelet_dir"
  complete "$kubelet_dir" kubelet
  exit $?
fi

if [[ $helm == 1 && "${1:-}" == "--print" ]]; then
  echo "helm=$helm_dir"
  complete "$helm_dir" helm
  exit $?
fi

if [[ $peer == 1 && "${1:-}" == "--print" ]]; then
  complete "$kruise_dir" kruise-manager || { echo "kruise=$kruise_dir"; exit 1; }
  echo "kruise=$kruise_dir"
  exit 0
fi

if [[ "${1:-}" == "--print" ]]; then
  ok=0
  complete "$k8s_dir" kube-apiserver kube-controller-manager kube-scheduler kubectl || ok=1
  complete "$etcd_dir" etcd || ok=1
  complete "$kwok_dir" kwok || ok=1
  printf 'kubernetes=%s\netcd=%s\nkwok=%s\n' "$k8s_dir" "$etcd_dir" "$kwok_dir"
  exit $ok
fi

if ! command -v go >/dev/null 2>&1; then
  echo "error: the Go toolchain is needed once to build the local control plane (kube-apiserver, etcd, kwok) and the upstream peer." >&2
  echo "       Install Go >= 1.26 (https://go.dev/doc/install) and run this again." >&2
  exit 127
fi

log() { printf '[build %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

# build <name> <module dir> <out dir> <ldflags> <packages...>
build() {
  local name=$1 mod=$2 out=$3 ldflags=$4; shift 4
  local tmp="$out.partial.$$"
  local start=$SECONDS
  log "building $name into $out (cold builds take minutes; output follows)"
  rm -rf "$tmp"; mkdir -p "$tmp"
  if ! (cd "$mod" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -tags=notest,grpcnotrace \
          -ldflags "$ldflags" -o "$tmp/" "$@"); then
    rm -rf "$tmp"
    echo "error: building $name failed (see the go output above). A module download error means the Go" >&2
    echo "       module proxy was unreachable: check GOPROXY ($(go env GOPROXY)) and retry." >&2
    exit 1
  fi
  rm -rf "$out"; mv "$tmp" "$out"
  log "built $name in $((SECONDS - start)) s"
}

total_start=$SECONDS

k8s_ldflags() {
  local minor ld="-s -w"
  minor=$(echo "$k8s_version" | cut -d. -f2)
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld="$ld -X $pkg.gitVersion=$k8s_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
    ld="$ld -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
  done
  echo "$ld"
}

if [[ $kubelet == 1 ]]; then
  if ! complete "$kubelet_dir" kubelet; then
    build "kubelet $k8s_version" "$here/k8s" "$kubelet_dir" "$(k8s_ldflags)" k8s.io/kubernetes/cmd/kubelet
  fi
  log "kubelet ready in $((SECONDS - total_start)) s"
  echo "kubelet=$kubelet_dir"
  exit 0
fi

if [[ $helm == 1 ]]; then
  if ! complete "$helm_dir" helm; then
    build "helm $helm_version" "$here/helm" "$helm_dir" \
      "-s -w -X helm.sh/helm/v3/internal/version.version=$helm_version" helm.sh/helm/v3/cmd/helm
  fi
  log "helm ready in $((SECONDS - total_start)) s"
  echo "helm=$helm_dir"
  exit 0
fi

if [[ $peer == 1 ]]; then
  if ! complete "$kruise_dir" kruise-manager; then
    build "kruise-manager $kruise_version" "$here/kruise-peer" "$kruise_dir" "-s -w" github.com/openkruise/kruise
    # go names the binary after the module path's last element: "kruise".
    mv "$kruise_dir/kruise" "$kruise_dir/kruise-manager"
  fi
  log "upstream peer ready in $((SECONDS - total_start)) s"
  echo "kruise=$kruise_dir"
  exit 0
fi

if [[ $e2e == 1 ]]; then
  if ! complete "$e2e_dir" e2e.test; then
    log "building the kruise e2e suite $e2e_version into $e2e_dir (cold builds take minutes)"
    tmp="$e2e_dir.partial.$$"
    rm -rf "$tmp"; mkdir -p "$tmp"
    # go test -c: the suite is a test package; hack/kruise-e2e/e2e_test.go is its entry point.
    if ! (cd "$here/kruise-e2e" && CGO_ENABLED=0 GOFLAGS=-mod=mod go test -c -trimpath -ldflags "-s -w" -o "$tmp/e2e.test" .); then
      rm -rf "$tmp"
      echo "error: building the kruise e2e suite failed (see the go output above)" >&2
      exit 1
    fi
    rm -rf "$e2e_dir"; mv "$tmp" "$e2e_dir"
  fi
  log "kruise e2e suite ready in $((SECONDS - total_start)) s"
  echo "e2e=$e2e_dir"
  exit 0
fi

if ! complete "$k8s_dir" kube-apiserver kube-controller-manager kube-scheduler kubectl; then
  build "kubernetes $k8s_version" "$here/k8s" "$k8s_dir" "$(k8s_ldflags)" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
    k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl
fi

if ! complete "$etcd_dir" etcd; then
  build "etcd $etcd_version" "$here/etcd" "$etcd_dir" "-s -w" go.etcd.io/etcd/server/v3
  # go names the binary after the last path element of go.etcd.io/etcd/server/v3: "server".
  mv "$etcd_dir/server" "$etcd_dir/etcd"
fi

if ! complete "$kwok_dir" kwok; then
  build "kwok $kwok_version" "$here/kwok" "$kwok_dir" \
    "-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=$kwok_version" sigs.k8s.io/kwok/cmd/kwok
fi

# KWOK's stock stage YAMLs live in its module zip; copy them beside the binary for reference.
if [[ ! -d "$kwok_dir/stages" ]]; then
  src=$(cd "$here/kwok" && go mod download -json "sigs.k8s.io/kwok@$kwok_version" | awk -F'"' '/"Dir"/{print $4}')
  [[ -d "$src/kustomize/stage" ]] && cp -r "$src/kustomize/stage" "$kwok_dir/stages" && chmod -R u+w "$kwok_dir/stages"
fi

log "binaries ready in $((SECONDS - total_start)) s"
printf 'kubernetes=%s\netcd=%s\nkwok=%s\n' "$k8s_dir" "$etcd_dir" "$kwok_dir"
