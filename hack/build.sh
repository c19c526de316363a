#!/usr/bin/env bash
# Compiles src/ to dist/: the JavaScript the production entry points (bin/kruise: manager, daemon,
# cluster commands) run, so that no TypeScript is transpiled at run time (tsx's loader thread and
# its source maps cost ≈150 MiB of RSS). No type check here (`./run.sh lint` does it) and no source
# maps. dist/ mirrors src/ at the same depth, so paths relative to a module (config/crd/bases,
# the CRI proto) resolve the same from both.
# `--if-stale`: only when dist/ is missing or a file under src/ is newer than the last build.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [[ ${1:-} == --if-stale && -f dist/.built && -z $(find src tsconfig.build.json -newer dist/.built -print -quit) ]]; then
  exit 0
fi
rm -rf dist.tmp
node_modules/.bin/node node_modules/typescript/bin/tsc -p tsconfig.build.json --outDir dist.tmp
(cd src && find . -type f ! -name '*.ts' -exec cp --parents {} ../dist.tmp/ \;)
touch dist.tmp/.built
rm -rf dist
mv dist.tmp dist
