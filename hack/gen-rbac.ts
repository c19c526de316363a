// Writes config/rbac/*.yaml from the access lists the code declares (src/manager/rbac.ts). Run with
// `npm run gen`.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rbacManifests } from '../src/manager/rbac.ts';

const outDir = join(dirname(fileURLToPath(import.meta.url)), '..', 'config', 'rbac');
mkdirSync(outDir, { recursive: true });
const files = rbacManifests();
for (const [file, text] of Object.entries(files)) writeFileSync(join(outDir, file), text);
console.log(`wrote ${Object.keys(files).length} RBAC manifests to ${outDir}`);
