// Writes config/crd/bases/<group>_<plural>.yaml for every kind in src/apis/registry.ts and removes
// stale files there. Run with `npm run gen`.

import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { crdFileName, renderCRD } from '../src/apis/crd.ts';
import { kinds } from '../src/apis/registry.ts';

const outDir = join(dirname(fileURLToPath(import.meta.url)), '..', 'config', 'crd', 'bases');
mkdirSync(outDir, { recursive: true });

const written = new Set<string>();
for (const def of kinds) {
  const file = crdFileName(def);
  writeFileSync(join(outDir, file), renderCRD(def));
  written.add(file);
}
for (const file of readdirSync(outDir)) {
  if (file.endsWith('.yaml') && !written.has(file)) rmSync(join(outDir, file));
}
console.log(`wrote ${written.size} CRDs to ${outDir}`);
