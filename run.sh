#!/usr/bin/env bash
# The two commands of the README:
#   ./run.sh start   run Kruise TS (with no KUBECONFIG: on the embedded local cluster)
#   ./run.sh test    run the whole test suite (unit + integration on the local cluster)
# and for development: ./run.sh lint (types, ESLint, Prettier; CI runs it before the tests),
# ./run.sh image (the OCI image, docs/install.md), ./run.sh bench NAME [flags] (bench/NAME.ts, on
# the pinned Node: the measurements start bin/kruise and the manager needs Node >= 22).
# Both install what they need first: npm dependencies (which include the Node 24 runtime, from the
# pinned `node` package) and, once, the Go-built control plane (cached in ~/.cache/kruise-ts).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

if ! command -v npm >/dev/null 2>&1; then
  echo "error: npm is needed to install Kruise TS's dependencies (any Node.js >= 18 with npm will do; Node 24 comes from npm)." >&2
  exit 1
fi
stamp=node_modules/.kruise-ts-installed
if [[ ! -f $stamp || package-lock.json -nt $stamp ]]; then
  echo "installing npm dependencies (npm ci)..." >&2
  npm ci --no-audit --no-fund --loglevel=error >&2
  touch "$stamp"
fi
node=node_modules/.bin/node

case "${1:-}" in
  # The developer path: TypeScript run through tsx, no build step. bin/kruise runs the compiled dist/.
  start) shift; exec "$node" --import tsx src/cli/kruise.ts start "$@" ;;
  build) shift; exec hack/build.sh "$@" ;;
  # The OCI image (build/image), without a container engine: hack/build-image.sh.
  image) shift; exec hack/build-image.sh "$@" ;;
  # Tests run src/ through tsx; the few that run bin/kruise need dist/ (built once here, not per test).
  test)  shift; hack/build.sh --if-stale; exec "$node" --import tsx hack/test.ts "$@" ;;
  bench) shift; name=${1:?usage: ./run.sh bench NAME [flags] (a file of bench/; NAME --help describes it)}; shift
         if ! grep -qs 'benchArgs(' "bench/$name.ts"; then
           echo "no benchmark bench/$name.ts; there are: $(grep -l '^// Usage:' bench/*.ts | sed 's|bench/||; s|\.ts$||' | tr '\n' ' ')" >&2
           exit 2
         fi
         exec "$node" --import tsx "bench/$name.ts" "$@" ;;
  lint)  shift
         "$node" node_modules/typescript/bin/tsc --noEmit -p .
         "$node" node_modules/eslint/bin/eslint.js --max-warnings=0 .
         exec "$node" node_modules/prettier/bin/prettier.cjs --check --log-level=warn . ;;
  *)     exec "$node" --import tsx src/cli/kruise.ts "$@" ;;
esac
