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
  const cfg = parse(['--cloneset-workers=7', '--crr-workers', '2', '--statefulset-workers=4']);
  assert.deepEqual(Object.keys(cfg.workers).sort(), allControllers.map((c) => c.workersFlag ?? c.name).sort());
  assert.equal(cfg.workers.cloneset, 7);
  assert.equal(cfg.workers.crr, 2);
  assert.equal(cfg.workers.podreadiness, 3);
  assert.equal(cfg.workers.statefulset, 4);
  assert.equal(parse(['--uniteddeployment-workers=5']).workers.uniteddeployment, 5);
  assert.throws(() => parse(['--nosuchkind-workers=3']), /unknown option/);
});

test('--assign-bcj-pods-by-scheduler: true by default, as upstream; --broadcastjob-workers and --advancedcronjob-workers exist', () => {
  assert.equal(parse([]).assignBcjPodsByScheduler, true);
  assert.equal(parse(['--assign-bcj-pods-by-scheduler=false']).assignBcjPodsByScheduler, false);
  const cfg = parse(['--broadcastjob-workers=5', '--advancedcronjob-workers', '2']);
  assert.deepEqual([cfg.workers.broadcastjob, cfg.workers.advancedcronjob], [5, 2]);
});

test('webhook client mode: service in a pod without a kubeconfig, url outside; the bind host follows', () => {
  const cfg = (args: string[], env: Record<string, string>) => {
    const cmd = addManagerFlags(new Command('start').exitOverride().configureOutput({ writeErr: () => {} }));
    cmd.parse(args, { from: 'user' });
    return managerConfig(cmd.opts(), env);
  };
  const inPod = { KUBERNETES_SERVICE_HOST: '10.96.0.1' };
  assert.deepEqual(pick(cfg([], inPod)), { webhookClientMode: 'service', webhookHost: '' });
  assert.deepEqual(pick(cfg(['--kubeconfig', '/k'], inPod)), { webhookClientMode: 'url', webhookHost: '127.0.0.1' });
  assert.deepEqual(pick(cfg([], { ...inPod, KUBECONFIG: '/k' })), { webhookClientMode: 'url', webhookHost: '127.0.0.1' });
  assert.deepEqual(pick(cfg([], {})), { webhookClientMode: 'url', webhookHost: '127.0.0.1' });
  assert.deepEqual(pick(cfg(['--webhook-client-mode=url'], inPod)), { webhookClientMode: 'url', webhookHost: '127.0.0.1' });
  assert.deepEqual(pick(cfg(['--webhook-host=10.0.0.5'], inPod)), { webhookClientMode: 'service', webhookHost: '10.0.0.5' });
});

const pick = ({ webhookClientMode, webhookHost }: { webhookClientMode: string; webhookHost: string }) => ({
  webhookClientMode,
  webhookHost,
});

test('--sharding: off by default; on only with leader election (the leader runs the sharder)', () => {
  assert.equal(parse([]).sharding, false);
  assert.equal(parse(['--sharding=true']).sharding, true);
  assert.throws(() => parse(['--sharding=true', '--enable-leader-election=false']), /--sharding needs --enable-leader-election=true/);
});
