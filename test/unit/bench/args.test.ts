// The bench scripts' command line: `--help` prints the script's header comment, a flag it does not
// know is answered in one line with exit code 2, never a stack trace.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { headerComment } from '../../../bench/args.ts';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const script = path.join(repoRoot, 'bench/workqueue.ts');
const run = (...args: string[]) =>
  spawnSync(process.execPath, ['--import', 'tsx', script, ...args], { cwd: repoRoot, encoding: 'utf8', timeout: 60_000 });

describe('bench command lines', () => {
  it('--help prints what the script measures and its usage, from its header comment', () => {
    const r = run('--help');
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, `${headerComment(script)}\n`);
    assert.match(r.stdout, /^WorkQueue throughput benchmark/);
    assert.ok(!r.stdout.includes('//'), 'comment markers stripped');
  });

  it('an unknown flag is one line and exit code 2', () => {
    const r = run('--no-such-flag');
    assert.equal(r.status, 2);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^Unknown option '--no-such-flag'/);
    assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
  });
});
