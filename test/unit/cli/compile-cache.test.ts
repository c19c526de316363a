// The production CLIs keep V8's compiled code of their commands in Node's compile cache.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

describe('compile cache', () => {
  for (const cli of ['kruise', 'kubectl-kruise']) {
    test(`bin/${cli} writes it under the temporary directory when NODE_COMPILE_CACHE names none`, () => {
      const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'compile-cache-'));
      try {
        const env: NodeJS.ProcessEnv = { ...process.env, TMPDIR: tmp };
        delete env.NODE_COMPILE_CACHE;
        delete env.NODE_DISABLE_COMPILE_CACHE;
        execFileSync(path.join(repoRoot, 'bin', cli), ['--help'], { env, stdio: 'ignore' });
        const cache = path.join(tmp, 'node-compile-cache');
        const entries = fs.readdirSync(cache, { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
        assert.ok(entries.length > 0, `cached modules in ${cache}`);
      } finally {
        fs.rmSync(tmp, { recursive: true, force: true });
      }
    });
  }
});
