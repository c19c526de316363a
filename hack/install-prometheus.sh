#!/usr/bin/env bash
# Installs what the monitoring tests run: Debian's `prometheus` package, which provides `prometheus`
# (the integration test scrapes a manager with it) and `promtool` (checks and unit-tests the chart's
# alerting rules). Idempotent: does nothing when both are present. The tests run their own
# Prometheus, not the package's service.
set -euo pipefail
command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1 && exit 0
exec "$(dirname "${BASH_SOURCE[0]}")/apt-install.sh" "the monitoring tests" prometheus
