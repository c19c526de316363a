#!/usr/bin/env bash
# `./run.sh image`: the OCI image of Kruise TS, built without a container engine (umoci and skopeo,
# Debian packages) from what the clone already has: the compiled dist/, the CRDs, the production
# npm dependencies and the pinned Node binary (stripped) with the few host libraries it links.
#
#   entrypoint  /usr/local/bin/node <config/node/flags> /kruise/dist/cli/kruise.js     cmd: start (the manager)
#   daemon      args: daemon --node-name $(NODE_NAME) --runtime-endpoint unix:///…
#   user        65532:65532 (kruise), workdir /kruise
#
# Reproducible: every file's mtime and the image's created time are the Unix epoch, no history,
# so the same sources give the same digest. Output: an OCI layout in build/image (tag = package
# version, plus `latest`), and build/image/kruise-ts.tar (docker-archive, what
# `ctr images import` reads) named kruise-ts.local/kruise-ts:<version>.
# Needs root (umoci keeps file ownership as root:root only when run as root) and
# hack/install-node-runtime.sh's packages.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
for cmd in umoci skopeo strip ldd; do
  command -v "$cmd" >/dev/null 2>&1 || {
    echo "error: ./run.sh image needs $cmd (umoci, skopeo: hack/install-node-runtime.sh; strip: binutils)" >&2
    exit 1
  }
done
if [[ $(id -u) -ne 0 ]]; then
  echo "error: ./run.sh image needs root (the image's files must be owned by root:root)" >&2
  exit 1
fi

hack/build.sh --if-stale
node=$(readlink -f node_modules/.bin/node)
version=$(node_modules/.bin/node -p "JSON.parse(require('fs').readFileSync('package.json','utf8')).version")
out=$root/build/image
epoch=1970-01-01T00:00:00Z

work=$(mktemp -d /tmp/kruise-ts-image.XXXXXX)
trap 'rm -rf "$work"' EXIT
layout=$work/oci
bundle=$work/bundle
umoci init --layout "$layout"
umoci new --image "$layout:$version"
umoci unpack --image "$layout:$version" "$bundle" >/dev/null
rootfs=$bundle/rootfs

# Node and the shared libraries it links (from the host: Debian's glibc and libstdc++).
mkdir -p "$rootfs/usr/local/bin" "$rootfs/tmp" "$rootfs/etc" "$rootfs/kruise"
chmod 1777 "$rootfs/tmp"
strip --strip-all -o "$rootfs/usr/local/bin/node" "$node"
for lib in $(ldd "$node" | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}'); do
  mkdir -p "$rootfs$(dirname "$lib")"
  cp -L "$lib" "$rootfs$lib"
done
printf 'root:x:0:0:root:/root:/sbin/nologin\nkruise:x:65532:65532:kruise:/kruise:/sbin/nologin\n' >"$rootfs/etc/passwd"
printf 'root:x:0:\nkruise:x:65532:\n' >"$rootfs/etc/group"

# The application: compiled JavaScript, CRDs (installed by the manager), package.json ("type": "module").
app=$rootfs/kruise
cp -r dist "$app/dist"
rm -f "$app/dist/.built"
mkdir -p "$app/config/crd"
cp -r config/crd/bases "$app/config/crd/bases"
cp package.json "$app/"
# Production dependencies only (hack/prod-deps.ts: no dev tools, no TypeScript).
modules=$(readlink -f node_modules)
for rel in $(node_modules/.bin/node --import tsx hack/prod-deps.ts); do
  # Without its own node_modules/: the nested packages it needs are in the list too.
  mkdir -p "$app/node_modules/$rel"
  tar -C "$modules/$rel" --exclude=./node_modules -c . | tar -C "$app/node_modules/$rel" -x
done
find "$app/node_modules" \( -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' -o -name '*.map' -o -name '*.md' -o -name '*.ts' \) -type f -delete
# Readable by the image's user whatever the build tree's modes were (dist/ is made by mktemp -d: 0700).
chmod -R a+rX,go-w "$rootfs/kruise" "$rootfs/usr/local/bin"
find "$rootfs" -exec touch -h -d "$epoch" {} +

# The production Node flags (config/node/flags), as bin/kruise passes them.
node_flags=()
while read -r flag; do node_flags+=(--config.entrypoint "$flag"); done < <(sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e '/^$/d' config/node/flags)
umoci repack --history.created "$epoch" --history.created_by "hack/build-image.sh" --image "$layout:$version" "$bundle" >/dev/null
umoci config --no-history --image "$layout:$version" --created "$epoch" --author "Kruise TS" \
  --architecture amd64 --os linux \
  --config.user 65532:65532 --config.workingdir /kruise \
  --config.env PATH=/usr/local/bin:/usr/bin:/bin --config.env NODE_ENV=production \
  --config.entrypoint /usr/local/bin/node "${node_flags[@]}" --config.entrypoint /kruise/dist/cli/kruise.js \
  --config.cmd start \
  --config.label "org.opencontainers.image.title=kruise-ts" \
  --config.label "org.opencontainers.image.version=$version"
umoci tag --image "$layout:$version" latest
umoci gc --layout "$layout"

rm -rf "$out"
mkdir -p "$(dirname "$out")"
mv "$layout" "$out"
skopeo copy --quiet "oci:$out:$version" "docker-archive:$out/kruise-ts.tar:kruise-ts.local/kruise-ts:$version"

manifest=$(node_modules/.bin/node -e '
const fs = require("fs"), dir = process.argv[1];
const index = JSON.parse(fs.readFileSync(dir + "/index.json", "utf8"));
const m = index.manifests.find((x) => x.annotations?.["org.opencontainers.image.ref.name"] === "latest");
const blob = (d) => dir + "/blobs/" + d.replace(":", "/");
const manifest = JSON.parse(fs.readFileSync(blob(m.digest), "utf8"));
const compressed = manifest.layers.reduce((n, l) => n + l.size, 0) + manifest.config.size + m.size;
console.log(m.digest + " " + compressed);
' "$out")
digest=${manifest% *}
bytes=${manifest#* }
uncompressed=$(du -sb "$rootfs" | cut -f1)
echo "image kruise-ts.local/kruise-ts:$version" >&2
echo "  OCI layout  $out (tags $version, latest); docker-archive $out/kruise-ts.tar" >&2
echo "  manifest    $digest" >&2
echo "  size        $((bytes / 1048576)) MiB compressed ($bytes bytes), $((uncompressed / 1048576)) MiB unpacked" >&2
echo "$digest"
