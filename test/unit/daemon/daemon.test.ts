import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Command } from 'commander';
import { startDaemon } from '../../../src/daemon/daemon.ts';
import { addDaemonFlags, daemonConfig } from '../../../src/daemon/options.ts';
import { RuntimeUnavailableError } from '../../../src/daemon/runtime/types.ts';
import { selectedNodesScope, singleNodeScope } from '../../../src/daemon/scope.ts';
import { FakeRuntime } from './fake-runtime.ts';

function parse(args: string[], env: NodeJS.ProcessEnv = {}) {
  const cmd = addDaemonFlags(new Command('daemon').exitOverride().configureOutput({ writeErr: () => {} }));
  cmd.parse(args, { from: 'user' });
  return daemonConfig(cmd.opts(), env);
}

test('flags: upstream defaults, NODE_NAME, --socket-file, --simulated', () => {
  const cfg = parse([], { NODE_NAME: 'n1' });
  assert.deepEqual([cfg.nodeName, cfg.addr, cfg.maxWorkersForPullImage, cfg.simulated], ['n1', ':10221', -1, false]);
  assert.equal(parse(['--node-name', 'n2', '--socket-file', '/run/x.sock'], { NODE_NAME: 'n1' }).runtimeEndpoint, '/run/x.sock');
  const sim = parse(['--simulated']);
  assert.deepEqual([sim.simulated, sim.simulatedNodeSelector, sim.nodeName], [true, 'type=kwok', undefined]);
  assert.throws(() => parse([]), /--node-name or env NODE_NAME/);
  assert.throws(() => parse(['--node-name', 'n', '--max-workers-for-pull-image', '0']), /-1 \(unbounded\)/);
  assert.throws(() => parse(['--node-name', 'n', '--feature-gates', 'Nope=true']), /unrecognized feature gate: Nope/);
});

test('start fails with a clear RuntimeUnavailableError when the runtime cannot be reached', async () => {
  await assert.rejects(
    startDaemon(
      { nodeName: 'n', addr: '0', maxWorkersForPullImage: -1, featureGates: '', simulated: false, simulatedNodeSelector: '' },
      {
        connectRuntime: async () => {
          throw new Error('connect ENOENT /run/containerd/containerd.sock');
        },
      },
    ),
    (err: Error) =>
      err instanceof RuntimeUnavailableError &&
      /not usable: connect ENOENT \/run\/containerd\/containerd.sock .*KruiseDaemon=false/.test(err.message),
  );
  const unavailable = new RuntimeUnavailableError('no CRI v1 runtime at unix:///x');
  await assert.rejects(
    startDaemon(
      { nodeName: 'n', addr: '0', maxWorkersForPullImage: -1, featureGates: '', simulated: false, simulatedNodeSelector: '' },
      {
        connectRuntime: async () => {
          throw unavailable;
        },
      },
    ),
    (err: Error) =>
      err instanceof RuntimeUnavailableError && err.message.startsWith(unavailable.message) && /KruiseDaemon=false/.test(err.message),
  );
});

test('a single-node scope watches only its node', () => {
  const rt = new FakeRuntime();
  const s = singleNodeScope('node-a', rt);
  assert.deepEqual(
    [s.crrSelector, s.podSelector, s.nodeNamedSelector],
    [
      { labelSelector: 'crr.apps.kruise.io/node-name=node-a' },
      { fieldSelector: 'spec.nodeName=node-a' },
      { fieldSelector: 'metadata.name=node-a' },
    ],
  );
  assert.equal(s.owns('node-a'), true);
  assert.equal(s.owns('node-b'), false);
  assert.equal(s.runtimeFor('node-a'), rt);
  assert.equal(s.runtimeFor('node-b'), undefined);
});

test('the simulated scope owns the selected nodes its informer knows', () => {
  const nodes = new Map<string, { metadata: { name: string; labels: Record<string, string> } }>();
  const informer = { lister: { get: (n: string) => nodes.get(n) }, addEventHandler: () => ({}) };
  const factory = {
    informerFor: (_t: unknown, sel: unknown) => {
      assert.deepEqual(sel, { labelSelector: 'type=kwok' });
      return informer;
    },
  };
  const rt = new FakeRuntime();
  const s = selectedNodesScope(
    factory as never,
    'type=kwok',
    () => rt,
    () => {},
  );
  nodes.set('kwok-0', { metadata: { name: 'kwok-0', labels: { type: 'kwok' } } });
  assert.equal(s.owns('kwok-0'), true);
  assert.equal(s.owns('other'), false);
  assert.equal(s.owns(undefined), false);
  assert.equal(s.runtimeFor('kwok-0'), rt);
  assert.deepEqual(s.podSelector, { fieldSelector: 'spec.nodeName!=' });
});

test('KruiseDaemon=false: the daemon idles without touching the runtime (no crash loop on a node it cannot use)', async () => {
  let connected = false;
  const daemon = await startDaemon(
    {
      nodeName: 'n',
      addr: '127.0.0.1:0',
      maxWorkersForPullImage: -1,
      featureGates: 'KruiseDaemon=false',
      simulated: false,
      simulatedNodeSelector: '',
    },
    {
      connectRuntime: async () => {
        connected = true;
        throw new Error('must not be called');
      },
    },
  );
  try {
    assert.equal(connected, false);
    assert.equal(daemon.features.KruiseDaemon, false);
    const res = await fetch(`http://127.0.0.1:${daemon.port}/healthz`);
    assert.equal(res.status, 200);
  } finally {
    await daemon.stop();
  }
});
