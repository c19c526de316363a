// kruise-manager flags: the wired timeouts and resync period parse with upstream defaults, and a
// --<name>-workers flag exists exactly for the controllers this manager runs.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Command } from 'commander';
import { allControllers } from '../../../src/controllers/index.ts';
import { addManagerFlags, managerConfig } from '../../../src/manager/options.ts';

const parse = (args: string[]) => {
  const cmd = addManagerFlags(new Command('start').exitOverride().configureOutput({ writeErr: () => {} }));
  cmd.parse(args, { from: 'user' });
  return managerConfig(cmd.opts());
};

test('sync period, cache-sync and webhook-initialize timeouts: defaults and Go durations', () => {
  const d = parse([]);
  assert.equal(d.syncPeriodMs, 10 * 3600_000);
  assert.equal(d.controllerCacheSyncTimeoutMs, 120_000);
  assert.equal(d.webhookInitializeTimeoutMs, 60_000);
  const set = parse(['--sync-period=30s', '--controller-cache-sync-timeout', '1m30s', '--webhook-initialize-timeout=5s']);
  assert.equal(set.syncPeriodMs, 30_000);
  assert.equal(set.controllerCacheSyncTimeoutMs, 90_000);
  assert.equal(set.webhookInitializeTimeoutMs, 5_000);
});

test('--<name>-workers exists for every running controller and for no other', () => {
  const cfg = parse(['--cloneset-workers=7', '--crr-workers', '2']);
  assert.deepEqual(Object.keys(cfg.workers).sort(), allControllers.map((c) => c.workersFlag ?? c.name).sort());
  assert.equal(cfg.workers.cloneset, 7);
  assert.equal(cfg.workers.crr, 2);
  assert.equal(cfg.workers.podreadiness, 3);
  assert.throws(() => parse(['--statefulset-workers=3']), /unknown option/);
});
