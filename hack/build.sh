#!/usr/bin/env bash
# Builds dist/: the JavaScript the production entry points (bin/kruise: manager, daemon, cluster
# commands; bin/kubectl-kruise) run, so that no TypeScript is transpiled at run time (tsx's loader
# thread and its source maps cost ≈150 MiB of RSS). One esbuild bundle per entry point, with a chunk
# per lazily imported subcommand (`--splitting`): Node then loads a handful of modules instead of
# ≈290 of ours and ≈200 of the dependencies', which halves the manager's import time and takes
# ≈20 MiB off its RSS (docs/benchmarks.md, issue 20). No type check here (`./run.sh lint` does it)
# and no source maps.
# Left out of the bundle, loaded from node_modules only when used: @kubernetes/client-node (exec and
# auth-provider kubeconfigs; 18 MB) and gRPC (the real CRI runtime) — and `js-yaml` and `node:http`,
# which our code takes through `require`.
# The chunks sit in dist/cli/, two levels below the repository like src/<dir>/<file>.ts, so a path
# relative to a module (config/crd/bases, the repository root) resolves the same from both; the CRI
# proto, read next to its module, is copied beside the chunks.
# dist/dashboard/app.js: the dashboard's page script, bundled for the browser.
# `--if-stale`: only when dist/ is missing or a file under src/ is newer than the last build.
# Concurrent callers (tests starting several `bin/kruise` at once) take turns on a lock, and the new
# tree replaces the old one by rename, so a starting process never sees a half-written dist/.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
stale() { [[ ! -f dist/.built || -n $(find src hack/build.sh -newer dist/.built -print -quit) ]]; }
exec 9>.build.lock
flock 9
if [[ ${1:-} == --if-stale ]] && ! stale; then exit 0; fi
out=$(mktemp -d dist.new.XXXXXX)
trap 'rm -rf "$out"' EXIT
# Bundled CommonJS dependencies call `require`, which an ES module does not have: the banner gives
# every chunk one.
# No --keep-names: it wraps every function and class in a `__name()` call (Object.defineProperty)
# that runs each time the function is created, so a closure built per pod per round (expectation
# checks, filters) cost a property definition each: 2.6% of the manager's busy time in the pod
# webhook benchmark. Identifiers are not minified, so names only change where two modules' top-level
# names collide in one chunk (a function gets a numeric suffix); no class does today.
node_modules/.bin/esbuild src/cli/kruise.ts src/cli/kubectl-kruise.ts \
  --bundle --splitting --format=esm --platform=node --target=node24 --minify-whitespace \
  --external:@kubernetes/client-node --external:@grpc/* \
  --banner:js="import { createRequire as __kruiseCreateRequire } from 'node:module'; const require = __kruiseCreateRequire(import.meta.url);" \
  --outdir="$out/cli" --log-level=warning
cp src/daemon/cri/api.proto "$out/cli/"
# The page script of `kubectl kruise dashboard` (src/cli/kubectl/dashboard/ui/app.ts), for the
# browser: preact and htm bundled in, so that the page needs no network.
node_modules/.bin/esbuild src/cli/kubectl/dashboard/ui/app.ts \
  --bundle --format=esm --platform=browser --target=es2022 --minify \
  --outfile="$out/dashboard/app.js" --log-level=warning
touch "$out/.built"
if [[ -d dist ]]; then mv dist "$out.old"; fi
mv "$out" dist
rm -rf "$out.old"
