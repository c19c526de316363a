#!/usr/bin/env bash
# Installs what the monitoring tests run: Debian's `prometheus` package, which provides `prometheus`
# (the integration test scrapes a manager with it) and `promtool` (checks and unit-tests the chart's
# alerting rules). Idempotent: does nothing when both are present. Needs root (apt-get) only when
# something is missing.
set -euo pipefail

if command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1; then
  exit 0
fi
if [[ $(id -u) -ne 0 ]]; then
  echo "error: the monitoring tests need the Debian package prometheus (prometheus, promtool), which is not installed" >&2
  echo "       install it as root: apt-get install -y --no-install-recommends prometheus" >&2
  exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "error: prometheus and promtool are missing and there is no apt-get to install them with; install Prometheus by hand" >&2
  exit 1
fi

echo "installing prometheus (apt-get)..." >&2
export DEBIAN_FRONTEND=noninteractive
# The package's service is not wanted: the tests run their own Prometheus.
if ! apt-get install -y --no-install-recommends prometheus >&2; then
  # A fresh machine may have no package lists yet.
  apt-get update >&2
  apt-get install -y --no-install-recommends prometheus >&2
fi
