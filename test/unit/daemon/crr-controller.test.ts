// The daemon's CRR executor against the in-memory API server: what reaches a CRR's status when the
// pod's containers are gone, or when killing fails inside the daemon itself.
import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { containerRecreateController } from '../../../src/daemon/containerrecreate/controller.ts';
const INTERNAL_KILL_ERROR = 'kruise-daemon internal error, see its log';
import { singleNodeScope } from '../../../src/daemon/scope.ts';
import { defaultFeatureGates } from '../../../src/apis/features.ts';
import { SharedInformerFactory } from '../../../src/runtime/informer-factory.ts';
import { logger } from '../../../src/runtime/log.ts';
import type { KubeClient } from '../../../src/runtime/client.ts';
import { realClock } from '../../../src/util/clock.ts';
import { useFakeApiServer, waitFor, type FakeApiServer } from '../runtime/fake-apiserver.ts';
import { FakeRuntime } from './fake-runtime.ts';

const CRRS = 'apps.kruise.io/v1beta1/containerrecreaterequests';
const PODS = '/v1/pods';

let server: FakeApiServer;
let client: KubeClient;
useFakeApiServer((s, c) => {
  server = s;
  client = c;
});

let stop: (() => Promise<void>) | undefined;
afterEach(async () => {
  await stop?.();
  stop = undefined;
});

async function run(runtime: FakeRuntime, name: string): Promise<void> {
  server.put(PODS, {
    metadata: { name, namespace: 'ns', uid: `pod-${name}` },
    spec: { nodeName: 'n1', containers: [{ name: 'app' }] },
    status: { phase: 'Running', containerStatuses: [{ name: 'app', containerID: 'containerd://app-0', restartCount: 0 }] },
  });
  server.put(CRRS, {
    metadata: {
      name,
      namespace: 'ns',
      creationTimestamp: new Date().toISOString(),
      labels: { 'crr.apps.kruise.io/node-name': 'n1', 'crr.apps.kruise.io/pod-uid': `pod-${name}` },
    },
    spec: {
      podName: name,
      containers: [{ name: 'app', statusContext: { containerID: 'containerd://app-0', restartCount: 0 } }],
      strategy: { failurePolicy: 'Fail' },
    },
  });
  const abort = new AbortController();
  const informers = new SharedInformerFactory(client, {});
  const sub = containerRecreateController({
    client,
    informers,
    scope: singleNodeScope('n1', runtime),
    recorder: { event() {} },
    clock: realClock,
    logger: logger.child({}, { level: 'silent' }),
    features: defaultFeatureGates({}),
  });
  informers.start(abort.signal);
  await informers.waitForCacheSync(abort.signal);
  sub.start();
  stop = async () => {
    abort.abort();
    await sub.stop();
  };
}

test('a pod whose containers are gone: nothing is killed, the states say so and the CRR stays open for the manager', async () => {
  const rt = new FakeRuntime();
  await run(rt, 'gone');
  await waitFor(() => server.getObject(CRRS, 'ns/gone')?.status?.containerRecreateStates !== undefined, 'states written');
  await new Promise((r) => setTimeout(r, 300));
  const crr = server.getObject(CRRS, 'ns/gone')!;
  assert.deepEqual(crr.status.containerRecreateStates, [{ name: 'app', phase: 'Pending', message: 'not found container on Node' }]);
  assert.equal(crr.status.phase, 'Recreating');
  assert.deepEqual(rt.calls, []);
});

test('a JavaScript error while killing is logged, and the state carries a proper message instead of its text', async () => {
  const rt = new FakeRuntime();
  rt.containers = [{ name: 'app', containerID: 'containerd://app-0', restartCount: 0, state: 'running', startedAt: Date.now() - 60_000 }];
  rt.stopContainer = async () => {
    throw new TypeError("Cannot read properties of undefined (reading 'x')");
  };
  await run(rt, 'bug');
  await waitFor(() => server.getObject(CRRS, 'ns/bug')?.status?.phase === 'Completed', 'CRR completed');
  const crr = server.getObject(CRRS, 'ns/bug')!;
  assert.deepEqual(crr.status.containerRecreateStates, [
    { name: 'app', phase: 'Failed', message: `kill container error: ${INTERNAL_KILL_ERROR}` },
  ]);
  assert.equal(crr.status.message, `container app failed: kill container error: ${INTERNAL_KILL_ERROR}`);
  assert.doesNotMatch(JSON.stringify(crr.status), /Cannot read|TypeError/);
  assert.match(crr.status.completionTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/, 'metav1.Time: whole seconds');

  // The runtime's own reasons are kept word for word.
  const rt2 = new FakeRuntime();
  rt2.containers = rt.containers;
  rt2.stopError = 'rpc error: code = Unknown desc = wedged';
  await stop?.();
  await run(rt2, 'wedged');
  await waitFor(() => server.getObject(CRRS, 'ns/wedged')?.status?.phase === 'Completed', 'CRR completed');
  assert.equal(
    server.getObject(CRRS, 'ns/wedged')!.status.containerRecreateStates[0].message,
    'kill container error: rpc error: code = Unknown desc = wedged',
  );
});
