// V8's --optimize-for-size turned on once `start`/`daemon` are up, unless the Node flags decide.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, test } from 'node:test';
import { optimizeForSizeFromNow } from '../../../src/cli/optimize-for-size.ts';

function run(flags: string[]) {
  const set: string[] = [];
  const did = optimizeForSizeFromNow(flags, (f) => set.push(f));
  return { did, set };
}

describe('optimizeForSizeFromNow', () => {
  test('turns --optimize-for-size on when the Node flags do not name it', () => {
    assert.deepEqual(run([]), { did: true, set: ['--optimize-for-size'] });
    assert.deepEqual(run(['--max-semi-space-size=8', '--optimize-for-sizes', '--no-freeze-flags-after-init']), {
      did: true,
      set: ['--optimize-for-size'],
    });
  });

  test('leaves it to the Node flags when they set it either way or freeze V8 flags', () => {
    for (const flag of [
      '--no-optimize-for-size',
      '--optimize-for-size',
      '--optimize_for_size',
      '--optimize-for-size=false',
      '--freeze-flags-after-init',
    ])
      assert.deepEqual(run(['--max-semi-space-size=8', flag]), { did: false, set: [] }, flag);
  });

  test('V8 takes the flag after start (Node leaves its flags writable)', () => {
    // A V8 that froze its flags after start would abort the process here.
    const out = execFileSync(process.execPath, [
      '-e',
      "require('node:v8').setFlagsFromString('--optimize-for-size'); globalThis.x = Array.from({ length: 1e5 }, (_, i) => ({ i })); console.log('alive')",
    ]);
    assert.equal(out.toString().trim(), 'alive');
  });
});
