#!/usr/bin/env bash
# Installs Debian's fish, the shell the completion test (test/unit/cli/completion-shells.test.ts)
# sources `kubectl-kruise completion fish` in. Idempotent: does nothing when fish is present.
set -euo pipefail
command -v fish >/dev/null 2>&1 && exit 0
exec "$(dirname "${BASH_SOURCE[0]}")/apt-install.sh" "the fish completion test" fish
