#!/usr/bin/env bash
# Installs Debian's chromium, the headless browser the dashboard's browser test
# (test/integration/dashboard-browser.test.ts) drives through playwright-core.
# Idempotent: does nothing when chromium is present.
set -euo pipefail
command -v chromium >/dev/null 2>&1 && exit 0
exec "$(dirname "${BASH_SOURCE[0]}")/apt-install.sh" "the dashboard's browser test" chromium
