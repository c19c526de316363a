// The binary build script fails with one clear message when Go is missing, and --print reports a
// missing cache instead of building.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from '../../../src/cluster/binaries.ts';

const script = path.join(repoRoot, 'hack/build-binaries.sh');
const emptyCache = () => mkdtempSync(path.join(os.tmpdir(), 'kruise-ts-cache-'));

test('without a Go toolchain the build says what is missing and how to fix it (exit 127)', () => {
  const r = spawnSync('bash', [script], {
    encoding: 'utf8',
    env: { PATH: '/usr/bin:/bin', KRUISE_TS_CACHE: emptyCache(), HOME: os.tmpdir() },
  });
  assert.equal(r.status, 127);
  assert.match(r.stderr, /the Go toolchain is needed once to build the local control plane/);
  assert.match(r.stderr, /Install Go >= 1\.26/);
});

test('--print on an empty cache lists the expected dirs, keyed by version, and exits 1 without building', () => {
  const cache = emptyCache();
  const r = spawnSync('bash', [script, '--print'], { encoding: 'utf8', env: { ...process.env, KRUISE_TS_CACHE: cache } });
  assert.equal(r.status, 1);
  assert.match(r.stdout, new RegExp(`^kubernetes=${cache}/bin/kubernetes-v1\\.\\d+\\.\\d+$`, 'm'));
  assert.match(r.stdout, new RegExp(`^etcd=${cache}/bin/etcd-v3\\.6\\.\\d+$`, 'm'));
  assert.match(r.stdout, new RegExp(`^kwok=${cache}/bin/kwok-v0\\.8\\.\\d+$`, 'm'));
});
