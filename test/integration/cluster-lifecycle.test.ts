// Lifecycle of the local cluster itself: reuse, crash clean-up, clear failures for a port in use and
// a component that exits early, and scale to 1000 simulated nodes. Each case uses its own cluster
// name so the shared test cluster is never disturbed.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { up, down, status, readState, runDirOf, kubectl } from '../../src/cluster/local-cluster.ts';
import { processesMentioning } from '../../src/cluster/processes.ts';

const quiet = () => undefined;
const name = (s: string) => `lc-${s}-${process.pid}`;
const execFileP = promisify(execFile);

describe('local cluster lifecycle', { concurrency: false }, () => {
  const used: string[] = [];
  after(async () => {
    for (const n of used) await down(n, { quiet: true, purge: true });
  });

  test('up reuses a running cluster; status reports it; down stops every process', async () => {
    const n = name('reuse');
    used.push(n);
    const first = await up({ name: n, nodes: 2, log: quiet });
    assert.equal(first.reused, false);
    const second = await up({ name: n, nodes: 2, log: quiet });
    assert.equal(second.reused, true);
    assert.equal(second.state.server, first.state.server);

    const s = await status(n);
    assert.equal(s.running, true);
    assert.equal(s.nodesReady, 2);
    assert.ok(s.components.every((c) => c.alive));

    // The CLI speaks the same state.
    const cli = await execFileP('bin/kruise', ['cluster', 'status', '--name', n, '-o', 'json']);
    assert.equal(JSON.parse(cli.stdout).running, true);

    const { stopped } = await down(n, { quiet: true, purge: true });
    assert.equal(stopped, 7, 'etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok, webhook-proxy, storage-provisioner');
    assert.deepEqual(processesMentioning(runDirOf(n)), []);
    assert.equal(readState(n), null);
  });

  test('a crashed component leaves a stale run dir that status reports, down cleans and up replaces', async () => {
    const n = name('crash');
    used.push(n);
    const { state } = await up({ name: n, nodes: 1, log: quiet });
    process.kill(state.pids['kube-apiserver']!, 'SIGKILL');
    await new Promise((r) => setTimeout(r, 300));
    const s = await status(n);
    assert.equal(s.running, false);
    assert.equal(s.components.find((c) => c.name === 'kube-apiserver')!.alive, false);

    // up on the stale dir cleans it and starts a fresh cluster.
    const again = await up({ name: n, nodes: 1, log: quiet });
    assert.equal(again.reused, false);
    assert.notEqual(again.state.pids['kube-apiserver'], state.pids['kube-apiserver']);
    assert.match(await kubectl(again.state, ['get', 'nodes']), /kwok-node-0\s+Ready/);

    // down after another crash still stops everything, found by run dir.
    process.kill(again.state.pids.etcd!, 'SIGKILL');
    await down(n, { quiet: true, purge: true });
    assert.deepEqual(processesMentioning(runDirOf(n)), []);
  });

  test('a port in use fails with one clear message and leaves nothing running', async () => {
    const n = name('port');
    used.push(n);
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      await assert.rejects(
        up({ name: n, port, log: quiet }),
        new RegExp(`port ${port} on 127.0.0.1 \\(kube-apiserver --port\\) is already in use`),
      );
      assert.deepEqual(processesMentioning(runDirOf(n)), []);
    } finally {
      blocker.close();
    }
  });

  test('a component that exits during start-up is named, with its log, and nothing is left running', async () => {
    const n = name('early');
    used.push(n);
    await assert.rejects(up({ name: n, nodes: 1, log: quiet, extraArgs: { 'kube-scheduler': ['--no-such-flag'] } }), (err: Error) => {
      assert.match(err.message, /kube-scheduler exited during start-up/);
      assert.match(err.message, /unknown flag: --no-such-flag/);
      return true;
    });
    assert.deepEqual(processesMentioning(runDirOf(n)), []);
    assert.equal(readState(n), null);
  });

  test('1000 simulated nodes come up Ready, spread over 3 zones', async () => {
    const n = name('big');
    used.push(n);
    const began = Date.now();
    const { state } = await up({ name: n, nodes: 1000, log: quiet });
    const nodes = JSON.parse(await kubectl(state, ['get', 'nodes', '-o', 'json'])).items as any[];
    assert.equal(nodes.length, 1000);
    const perZone = new Map<string, number>();
    for (const node of nodes) {
      assert.ok(node.status.conditions.some((c: any) => c.type === 'Ready' && c.status === 'True'));
      const z = node.metadata.labels['topology.kubernetes.io/zone'];
      perZone.set(z, (perZone.get(z) ?? 0) + 1);
    }
    assert.deepEqual([...perZone.values()].sort(), [333, 333, 334]);
    process.stderr.write(`# 1000-node cluster up in ${((Date.now() - began) / 1000).toFixed(1)}s\n`);
    await down(n, { quiet: true, purge: true });
  });
});
