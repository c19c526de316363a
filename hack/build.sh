#!/usr/bin/env bash
# Compiles src/ to dist/: the JavaScript the production entry points (bin/kruise: manager, daemon,
# cluster commands) run, so that no TypeScript is transpiled at run time (tsx's loader thread and
# its source maps cost ≈150 MiB of RSS). No type check here (`./run.sh lint` does it) and no source
# maps. dist/ mirrors src/ at the same depth, so paths relative to a module (config/crd/bases,
# the CRI proto) resolve the same from both.
# `--if-stale`: only when dist/ is missing or a file under src/ is newer than the last build.
# Concurrent callers (tests starting several `bin/kruise` at once) take turns on a lock, and the new
# tree replaces the old one by rename, so a starting process never sees a half-written dist/.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
stale() { [[ ! -f dist/.built || -n $(find src tsconfig.build.json -newer dist/.built -print -quit) ]]; }
exec 9>.build.lock
flock 9
if [[ ${1:-} == --if-stale ]] && ! stale; then exit 0; fi
out=$(mktemp -d dist.new.XXXXXX)
trap 'rm -rf "$out"' EXIT
node_modules/.bin/node node_modules/typescript/bin/tsc -p tsconfig.build.json --outDir "$out"
(cd src && find . -type f ! -name '*.ts' -exec cp --parents {} "../$out/" \;)
touch "$out/.built"
if [[ -d dist ]]; then mv dist "$out.old"; fi
mv "$out" dist
rm -rf "$out.old"
