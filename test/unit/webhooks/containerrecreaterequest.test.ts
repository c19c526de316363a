import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AdmissionDenied } from '../../../src/runtime/webhook/types.ts';
import {
  mutateContainerRecreateRequest,
  registrations,
  validateContainerRecreateRequestUpdate,
} from '../../../src/webhooks/containerrecreaterequest/index.ts';
import { admission, fakeReader, loadExamples } from './nonworkload-helpers.ts';

const V = 'apps.kruise.io/v1beta1';

function pod(overrides: Record<string, any> = {}): any {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'pod-name', namespace: 'pod-namespace', uid: 'pod-uid-1' },
    spec: {
      nodeName: 'node-a',
      terminationGracePeriodSeconds: 45,
      containers: [
        {
          name: 'app',
          image: 'nginx',
          ports: [{ containerPort: 80 }],
          lifecycle: { preStop: { httpGet: { path: '/quit', port: 80 } } },
        },
        { name: 'sidecar', image: 'busybox', lifecycle: { preStop: { exec: { command: ['sh', '-c', 'sleep 1'] } } } },
        { name: 'fresh', image: 'busybox' },
      ],
    },
    status: {
      phase: 'Running',
      containerStatuses: [
        { name: 'app', restartCount: 2, containerID: 'containerd://app-1' },
        { name: 'sidecar', restartCount: 0, containerID: 'containerd://sidecar-1' },
        { name: 'fresh', restartCount: 0, containerID: '' },
      ],
    },
    ...overrides,
  };
}

function crr(containers: string[], spec: Record<string, any> = {}): any {
  return {
    apiVersion: V,
    kind: 'ContainerRecreateRequest',
    metadata: { name: 'crr', namespace: 'pod-namespace' },
    spec: { podName: 'pod-name', containers: containers.map((name) => ({ name })), ...spec },
  };
}

function node(labels: Record<string, string> = { type: 'kwok' }): any {
  return { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-a', labels } };
}

// Every pod's node exists unless a test passes its own objects through ctxWithOnly.
const ctxWith = (pods: any[]) => admission(V, 'CREATE', { reader: fakeReader([...pods, node()]), namespace: 'pod-namespace' });
const ctxWithOnly = (objects: any[]) => admission(V, 'CREATE', { reader: fakeReader(objects), namespace: 'pod-namespace' });

async function denial(obj: any, pods: any[] = [pod()]): Promise<{ message: string; code: number }> {
  try {
    await mutateContainerRecreateRequest(obj, ctxWith(pods));
  } catch (e) {
    assert.ok(e instanceof AdmissionDenied);
    return { message: e.message, code: e.code };
  }
  assert.fail('expected a denial');
}

describe('ContainerRecreateRequest mutating webhook', () => {
  test('injects labels, strategy default and container status context from the pod', async () => {
    const obj = crr(['app', 'sidecar']);
    await mutateContainerRecreateRequest(obj, ctxWith([pod()]));
    assert.deepEqual(obj.metadata.labels, {
      'crr.apps.kruise.io/active': 'true',
      'crr.apps.kruise.io/node-name': 'node-a',
      'crr.apps.kruise.io/pod-uid': 'pod-uid-1',
    });
    assert.deepEqual(obj.spec.strategy, { failurePolicy: 'Fail', terminationGracePeriodSeconds: 45 });
    assert.deepEqual(obj.spec.containers, [
      {
        name: 'app',
        preStop: { httpGet: { path: '/quit', port: 80 } },
        ports: [{ containerPort: 80 }],
        statusContext: { containerID: 'containerd://app-1', restartCount: 2 },
      },
      {
        name: 'sidecar',
        preStop: { exec: { command: ['sh', '-c', 'sleep 1'] } },
        statusContext: { containerID: 'containerd://sidecar-1', restartCount: 0 },
      },
    ]);
  });

  test('keeps an explicit grace period and Ignore policy', async () => {
    const obj = crr(['app'], { strategy: { failurePolicy: 'Ignore', terminationGracePeriodSeconds: 5 } });
    await mutateContainerRecreateRequest(obj, ctxWith([pod()]));
    assert.equal(obj.spec.strategy.failurePolicy, 'Ignore');
    assert.equal(obj.spec.strategy.terminationGracePeriodSeconds, 5);
  });

  test('a pod terminated by the sidecar terminator is still accepted', async () => {
    const p = pod();
    p.status.phase = 'Succeeded';
    p.status.conditions = [{ type: 'SidecarTerminated', status: 'True' }];
    const obj = crr(['sidecar']);
    await mutateContainerRecreateRequest(obj, ctxWith([p]));
    assert.equal(obj.metadata.labels['crr.apps.kruise.io/node-name'], 'node-a');
  });

  const inactive = pod();
  inactive.status.phase = 'Failed';
  const pending = pod();
  pending.spec.nodeName = '';
  const cases: Array<[string, any, any[] | undefined, string]> = [
    ['empty podName', { ...crr(['app']), spec: { podName: '', containers: [{ name: 'app' }] } }, undefined, 'podName can not be empty'],
    ['no containers', crr([]), undefined, 'containers list can not be null'],
    ['short deadline', crr(['app'], { activeDeadlineSeconds: 2 }), undefined, 'activeDeadlineSeconds can not be less than 3s'],
    [
      'negative termination grace',
      crr(['app'], { strategy: { terminationGracePeriodSeconds: -1 } }),
      undefined,
      'terminationGracePeriodSeconds must be non-negative integer',
    ],
    [
      'negative unready grace',
      crr(['app'], { strategy: { unreadyGracePeriodSeconds: -1 } }),
      undefined,
      'unreadyGracePeriodSeconds must be non-negative integer',
    ],
    ['unknown failurePolicy', crr(['app'], { strategy: { failurePolicy: 'Retry' } }), undefined, 'unknown failurePolicy Retry'],
    ['missing pod', crr(['app']), [], 'no found Pod named pod-name'],
    ['inactive pod', crr(['app']), [inactive], 'not allowed to recreate containers in an inactive Pod'],
    ['pending pod', crr(['app']), [pending], 'not allowed to recreate containers in a pending Pod'],
    ['duplicate container', crr(['app', 'app']), undefined, 'can not recreate app multi times'],
    [
      'read-only fields',
      { ...crr([]), spec: { podName: 'pod-name', containers: [{ name: 'app', ports: [] }] } },
      undefined,
      'preStop, ports, statusContext in container are ready-only fields',
    ],
    ['missing container', crr(['nope']), undefined, 'container nope not found in Pod'],
    [
      'container without ID',
      crr(['fresh']),
      undefined,
      'no containerID in fresh containerStatus, maybe the container has not been initialized',
    ],
  ];
  for (const [name, obj, pods, message] of cases) {
    test(`rejects: ${name}`, async () => {
      assert.deepEqual(await denial(obj, pods), { message, code: 400 });
    });
  }

  for (const podName of ['a/b', '..', 'Pod-A', 'x'.repeat(254)]) {
    test(`a podName no pod can have (${podName.slice(0, 12)}) is refused as invalid, naming spec.podName, before any read`, async () => {
      const obj = { ...crr(['app']), spec: { podName, containers: [{ name: 'app' }] } };
      const reads: string[] = [];
      const reader = { get: async (_v: string, kind: string) => (reads.push(kind), null), list: async () => [] };
      const err = await mutateContainerRecreateRequest(obj, { ...ctxWith([]), reader } as never).then(
        () => undefined,
        (e: unknown) => e as AdmissionDenied,
      );
      assert.equal(err?.code, 422);
      assert.match(err.message, /^(\[)?spec\.podName: Invalid value: "/);
      assert.deepEqual(reads, []);
    });
  }

  test('missing container status', async () => {
    const p = pod();
    p.status.containerStatuses = p.status.containerStatuses.filter((s: any) => s.name !== 'sidecar');
    assert.equal((await denial(crr(['sidecar']), [p])).message, 'not found sidecar containerStatus in Pod Status');
  });

  test('a missing node is refused: no daemon would ever execute the request', async () => {
    try {
      await mutateContainerRecreateRequest(crr(['app']), ctxWithOnly([pod()]));
      assert.fail('expected a denial');
    } catch (e) {
      assert.ok(e instanceof AdmissionDenied);
      assert.equal(e.message, 'failed to get Node node-a: nodes "node-a" not found');
      assert.equal(e.code, 400);
    }
  });

  test('a pod on a virtual-kubelet node gets the virtual-kubelet label', async () => {
    const obj = crr(['app']);
    await mutateContainerRecreateRequest(obj, ctxWithOnly([pod(), node({ type: 'virtual-kubelet' })]));
    assert.equal(obj.metadata.labels.type, 'virtual-kubelet');
    const plain = crr(['app']);
    await mutateContainerRecreateRequest(plain, ctxWith([pod()]));
    assert.equal(plain.metadata.labels.type, undefined);
  });

  test('init containers (native sidecars) can be recreated, with their status context', async () => {
    const p = pod();
    p.spec.initContainers = [{ name: 'proxy', image: 'envoy', restartPolicy: 'Always' }];
    p.status.initContainerStatuses = [{ name: 'proxy', restartCount: 4, containerID: 'containerd://proxy-1' }];
    const obj = crr(['proxy']);
    await mutateContainerRecreateRequest(obj, ctxWith([p]));
    assert.deepEqual(obj.spec.containers, [{ name: 'proxy', statusContext: { containerID: 'containerd://proxy-1', restartCount: 4 } }]);
  });

  test('does nothing on UPDATE', async () => {
    const obj = crr(['app']);
    await mutateContainerRecreateRequest(obj, admission(V, 'UPDATE'));
    assert.deepEqual(obj, crr(['app']));
  });

  test('the upstream examples are admitted when their pod exists', async () => {
    for (const doc of loadExamples('containerrecreaterequest.yaml')) {
      await mutateContainerRecreateRequest(doc, ctxWith([pod()]));
      assert.equal(doc.metadata.labels['crr.apps.kruise.io/pod-uid'], 'pod-uid-1');
      assert.ok(doc.spec.containers.every((c: any) => c.statusContext));
    }
  });
});

describe('ContainerRecreateRequest update immutability', () => {
  const base = () => {
    const o = crr(['app']);
    o.metadata.labels = { 'crr.apps.kruise.io/pod-uid': 'u1', 'crr.apps.kruise.io/node-name': 'n1', 'crr.apps.kruise.io/active': 'true' };
    o.metadata.annotations = { 'crr.apps.kruise.io/unready-acquired': '{"x":1}' };
    return o;
  };
  const update = admission(V, 'UPDATE');
  const check = (mutate: (o: any) => void): string | undefined => {
    const obj = base();
    mutate(obj);
    try {
      validateContainerRecreateRequestUpdate(obj, base(), update);
      return undefined;
    } catch (e) {
      assert.equal((e as AdmissionDenied).code, 403);
      return (e as Error).message;
    }
  };
  test('label and status changes outside the guarded keys pass', () => {
    assert.equal(
      check((o) => delete o.metadata.labels['crr.apps.kruise.io/active']),
      undefined,
    );
  });
  test('spec is immutable', () => {
    assert.equal(
      check((o) => (o.spec.activeDeadlineSeconds = 10)),
      'spec of ContainerRecreateRequest is immutable',
    );
  });
  test('pod-uid and node-name labels are immutable', () => {
    assert.equal(
      check((o) => (o.metadata.labels['crr.apps.kruise.io/pod-uid'] = 'u2')),
      'not allowed to update immutable label crr.apps.kruise.io/pod-uid',
    );
    assert.equal(
      check((o) => delete o.metadata.labels['crr.apps.kruise.io/node-name']),
      'not allowed to update immutable label crr.apps.kruise.io/node-name',
    );
  });
  test('a set unready-acquired annotation is immutable', () => {
    assert.equal(
      check((o) => delete o.metadata.annotations['crr.apps.kruise.io/unready-acquired']),
      'not allowed to update immutable annotation crr.apps.kruise.io/unready-acquired',
    );
  });
  test('registration: both versions, gated on KruiseDaemon', () => {
    assert.deepEqual(
      registrations.map((r) => [r.resource, r.versions, r.operations, r.gate]),
      [['containerrecreaterequests', ['v1alpha1', 'v1beta1'], ['CREATE', 'UPDATE'], 'KruiseDaemon']],
    );
  });
});
