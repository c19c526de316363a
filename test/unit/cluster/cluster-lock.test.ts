// The lock and user records that keep starts and tear-downs of one local cluster from interleaving
// (no processes needed: a run dir with files is enough).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { clustersRoot, down, leave, runDirOf } from '../../../src/cluster/local-cluster.ts';

let home: string;
const saved = process.env.KRUISE_TS_HOME;
before(() => {
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'kruise-ts-lock-'));
  process.env.KRUISE_TS_HOME = home;
});
after(() => {
  if (saved === undefined) delete process.env.KRUISE_TS_HOME;
  else process.env.KRUISE_TS_HOME = saved;
  fs.rmSync(home, { recursive: true, force: true });
});

const quiet = () => undefined;

/** A run dir as a running cluster leaves it, with the given users recorded. */
function fakeCluster(name: string, users: number[]): string {
  const dir = runDirOf(name);
  for (const sub of ['logs', 'pki', 'users']) fs.mkdirSync(path.join(dir, sub), { recursive: true });
  fs.writeFileSync(path.join(dir, 'kubeconfig'), 'x');
  fs.writeFileSync(path.join(dir, 'state.json'), '{}');
  for (const u of users) fs.writeFileSync(path.join(dir, 'users', String(u)), '');
  return dir;
}

/** A live process that is not us, for `ms`. */
function otherProcess(ms: number) {
  const child = spawn(process.execPath, ['-e', `setTimeout(() => {}, ${ms})`], { stdio: 'ignore' });
  const exited = new Promise<void>((r) => child.on('exit', () => r()));
  return { pid: child.pid!, exited, kill: () => child.kill() };
}

test('the starter leaving tears the cluster down when nobody else uses it (logs kept)', async () => {
  const dir = fakeCluster('solo', [process.pid]);
  assert.equal(await leave('solo', process.pid, { tearDown: true, log: quiet }), true);
  assert.deepEqual(fs.readdirSync(dir), ['logs']);
  assert.equal(fs.existsSync(path.join(clustersRoot(), 'solo.lock')), false);
});

test('a cluster another start took over is left running, and the last user to leave stops it', async () => {
  const other = otherProcess(30_000);
  try {
    const dir = fakeCluster('shared', [process.pid, other.pid]);
    assert.equal(await leave('shared', process.pid, { tearDown: true, log: quiet }), false);
    assert.ok(fs.existsSync(path.join(dir, 'kubeconfig')), 'still running for the other user');
    // the other user did not start it, but the tear-down asked for falls to it
    assert.equal(await leave('shared', other.pid, { tearDown: false, log: quiet }), true);
    assert.deepEqual(fs.readdirSync(dir), ['logs']);
  } finally {
    other.kill();
  }
});

test('a user that never started the cluster leaves it running', async () => {
  const dir = fakeCluster('borrowed', [process.pid]);
  assert.equal(await leave('borrowed', process.pid, { tearDown: false, log: quiet }), false);
  assert.ok(fs.existsSync(path.join(dir, 'kubeconfig')));
  assert.deepEqual(fs.readdirSync(path.join(dir, 'users')), []);
});

test('tear-down waits for the lock held by a live process and takes over one left by a dead one', async () => {
  const dir = fakeCluster('locked', []);
  const holder = otherProcess(600);
  fs.writeFileSync(path.join(clustersRoot(), 'locked.lock'), String(holder.pid));
  const began = Date.now();
  await down('locked', { quiet: true });
  await holder.exited;
  assert.ok(Date.now() - began >= 400, `down waited for the holder (${Date.now() - began} ms)`);
  assert.deepEqual(fs.readdirSync(dir), ['logs']);

  const dead = otherProcess(0);
  await dead.exited;
  fakeCluster('locked', []);
  fs.writeFileSync(path.join(clustersRoot(), 'locked.lock'), String(dead.pid));
  await down('locked', { quiet: true });
  assert.deepEqual(fs.readdirSync(dir), ['logs']);
});
