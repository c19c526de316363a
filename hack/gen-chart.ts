// Writes the generated files of charts/kruise-ts (CRD templates, RBAC rules, the Grafana dashboard) from src/ and removes
// stale CRD templates. Run with `npm run gen`.
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CHART_DIR, chartGeneratedFiles } from '../src/manager/chart.ts';

const chartDir = join(dirname(fileURLToPath(import.meta.url)), '..', CHART_DIR);
const files = chartGeneratedFiles();
mkdirSync(join(chartDir, 'templates', 'crds'), { recursive: true });
for (const [file, text] of Object.entries(files)) {
  mkdirSync(dirname(join(chartDir, file)), { recursive: true });
  writeFileSync(join(chartDir, file), text);
}
for (const file of readdirSync(join(chartDir, 'templates', 'crds'))) {
  if (!(`templates/crds/${file}` in files)) rmSync(join(chartDir, 'templates', 'crds', file));
}
console.log(`wrote ${Object.keys(files).length} generated chart files to ${chartDir}`);
