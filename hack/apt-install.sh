#!/usr/bin/env bash
# Installs Debian packages some tests need: `hack/apt-install.sh "WHAT NEEDS THEM" PACKAGE...`.
# apt-get install, after apt-get update when a fresh machine has no package lists yet. Without root
# or without apt-get it says what to install and fails.
set -euo pipefail
needed_by=$1
shift

if [[ $(id -u) -ne 0 ]]; then
  echo "error: $needed_by need these Debian packages, which are not installed: $*" >&2
  echo "       install them as root: apt-get install -y --no-install-recommends $*" >&2
  exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "error: missing $* and no apt-get to install them with; install the equivalents of these Debian packages by hand" >&2
  exit 1
fi

echo "installing $* (apt-get)..." >&2
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y --no-install-recommends "$@" >&2; then
  apt-get update >&2
  apt-get install -y --no-install-recommends "$@" >&2
fi
