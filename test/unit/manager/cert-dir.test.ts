// The default webhook certificate directory: private, unpredictable, and removed when done.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { privateCertDir } from '../../../src/manager/manager.ts';

test("is a fresh 0700 directory in the temp dir, removed by the manager's stop", async () => {
  const closers: Array<() => Promise<void> | void> = [];
  const a = privateCertDir(closers);
  const b = privateCertDir(closers);
  assert.notEqual(a, b);
  for (const dir of [a, b]) {
    assert.equal(path.dirname(dir), os.tmpdir());
    assert.match(path.basename(dir), /^kruise-webhook-certs-\w{6}$/);
    assert.doesNotMatch(path.basename(dir), new RegExp(String(process.pid)));
    assert.equal(fs.statSync(dir).mode & 0o777, 0o700);
  }
  fs.writeFileSync(path.join(a, 'tls.key'), 'k');
  for (const close of closers) await close();
  assert.equal(fs.existsSync(a), false);
  assert.equal(fs.existsSync(b), false);
});

test('is removed at process exit when the manager never stopped', () => {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
  const script = `import { privateCertDir } from './src/manager/manager.ts'; const d = privateCertDir([]); process.stdout.write(d); process.exit(3);`;
  let dir = '';
  try {
    execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: root, encoding: 'utf8' });
  } catch (err) {
    assert.equal((err as { status: number }).status, 3);
    dir = (err as { stdout: string }).stdout;
  }
  assert.match(dir, /kruise-webhook-certs-/);
  assert.equal(fs.existsSync(dir), false);
});
