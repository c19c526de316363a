#!/usr/bin/env bash
# Installs what the containerd integration tests and real nodes (`kruise cluster up --real-nodes`,
# the real-node tests) run on: containerd + runc (the node runtime), docker-registry (a local OCI
# registry), skopeo + umoci (to build, push and import test images), busybox-static (the images'
# only binary), the CNI plugins (pod networking on real nodes), iproute2 (their interfaces) and
# iptables (the `kubernetes` Service for their pods).
# Idempotent: does nothing when all are present.
# Needs root (apt-get) only when something is missing.
set -euo pipefail

# command → Debian package that provides it
declare -A packages=(
  [containerd]=containerd
  [containerd-shim-runc-v2]=containerd
  [runc]=runc
  [docker-registry]=docker-registry
  [skopeo]=skopeo
  [umoci]=umoci
  [busybox]=busybox-static
  [ip]=iproute2
  [iptables]=iptables
)

missing=()
for cmd in "${!packages[@]}"; do
  command -v "$cmd" >/dev/null 2>&1 || missing+=("${packages[$cmd]}")
done
# The images need a statically linked busybox: a dynamic one (Debian's `busybox` package) would
# not run inside an image that has no libc. ldd fails on a static binary.
if command -v busybox >/dev/null 2>&1 && ldd "$(command -v busybox)" >/dev/null 2>&1; then
  missing+=(busybox-static)
fi
# Real nodes' pod network: Debian puts the plugins in /usr/lib/cni.
for plugin in bridge host-local loopback; do
  [[ -x /usr/lib/cni/$plugin ]] || missing+=(containernetworking-plugins)
done
if [[ ${#missing[@]} -eq 0 ]]; then
  exit 0
fi
mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)

if [[ $(id -u) -ne 0 ]]; then
  echo "note: the containerd and real-node tests also run containerd, so they need root as well" >&2
fi
"$(dirname "${BASH_SOURCE[0]}")/apt-install.sh" "the containerd and real-node tests" "${missing[@]}"
