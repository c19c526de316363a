#!/usr/bin/env bash
# Installs Debian's chromium, the headless browser the dashboard's browser test
# (test/integration/dashboard-browser.test.ts) drives through playwright-core.
# Idempotent: does nothing when chromium is present. Needs root (apt-get) only when it is missing.
set -euo pipefail

if command -v chromium >/dev/null 2>&1; then
  exit 0
fi
if [[ $(id -u) -ne 0 ]]; then
  echo "error: the dashboard's browser test needs Debian's chromium, which is not installed" >&2
  echo "       install it as root: apt-get install -y --no-install-recommends chromium" >&2
  exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "error: chromium is missing and there is no apt-get to install it with; install a Chromium by hand" >&2
  exit 1
fi

echo "installing chromium (apt-get)..." >&2
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y --no-install-recommends chromium >&2; then
  # A fresh machine may have no package lists yet.
  apt-get update >&2
  apt-get install -y --no-install-recommends chromium >&2
fi
