// Writes <group>_<plural>.yaml for every kind in src/apis/registry.ts into each API version set's
// directory (config/crd/bases: OpenKruise v1.8.2's versions, the default; config/crd/v1beta1) and
// removes stale files there. Run with `npm run gen`.

import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CRD_SET_DIRS, crdFileName, renderCRD } from '../src/apis/crd.ts';
import { API_VERSION_SETS, kinds } from '../src/apis/registry.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
for (const set of API_VERSION_SETS) {
  const outDir = join(root, CRD_SET_DIRS[set]);
  mkdirSync(outDir, { recursive: true });
  const written = new Set<string>();
  for (const def of kinds) {
    const file = crdFileName(def);
    writeFileSync(join(outDir, file), renderCRD(def, set));
    written.add(file);
  }
  for (const file of readdirSync(outDir)) {
    if (file.endsWith('.yaml') && !written.has(file)) rmSync(join(outDir, file));
  }
  console.log(`wrote ${written.size} CRDs (${set}) to ${outDir}`);
}
