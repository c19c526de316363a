import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { classifySidecars, isInterestingPod, planSidecarTermination } from '../../../src/controllers/sidecarterminator/plan.ts';
import type { Pod } from '../../../src/apis/core-objects.ts';
import { reconcileSidecarTerminator } from '../../../src/controllers/sidecarterminator/controller.ts';
import { StatusError } from '../../../src/runtime/errors.ts';

const T0 = Date.parse('2025-01-01T00:00:00Z');
const NORMAL = [{ name: 'KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT', value: 'true' }];
const IGNORE = [...NORMAL, { name: 'KRUISE_TERMINATE_SIDECAR_IGNORE_EXIT_CODE', value: 'TRUE' }];
const IMAGE = [{ name: 'KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE', value: 'busybox:exit' }];

type State = 'running' | number | undefined; // number: terminated with that exit code; undefined: no status

function pod(containers: Array<[string, any[] | undefined, State]>, o: { policy?: string; phase?: string; deleting?: boolean } = {}): Pod {
  return {
    metadata: {
      name: 'job-pod',
      namespace: 'ns',
      uid: 'u1',
      resourceVersion: '5',
      ...(o.deleting ? { deletionTimestamp: '2025-01-01T00:00:00Z' } : {}),
    },
    spec: {
      restartPolicy: o.policy ?? 'Never',
      nodeName: 'n1',
      containers: containers.map(([name, env]) => ({ name, image: `${name}:1`, ...(env ? { env } : {}) })),
    },
    status: {
      phase: o.phase ?? 'Running',
      containerStatuses: containers
        .filter(([, , s]) => s !== undefined)
        .map(([name, , s]) => ({ name, restartCount: 0, state: s === 'running' ? {} : { terminated: { exitCode: s as number } } })),
    },
  };
}

describe('sidecar classification', () => {
  const p = pod([
    ['main', undefined, 0],
    ['a', NORMAL, 'running'],
    ['b', IGNORE, 'running'],
    ['c', IMAGE, 'running'],
    ['d', [...NORMAL, ...IMAGE], 'running'],
  ]);
  test('normal node: CRR sidecars, ignore-exit-code ones apart; image-only sidecars are left alone', () => {
    assert.deepEqual(classifySidecars(p, false), { normal: ['a', 'd'], ignoreExitCode: ['b'], inPlaceUpdate: [] });
  });
  test('virtual-kubelet node: only sidecars with a replacement image', () => {
    assert.deepEqual(classifySidecars(p, true), { normal: [], ignoreExitCode: [], inPlaceUpdate: ['c', 'd'] });
  });
});

describe('isInterestingPod', () => {
  const cases: Array<[string, Pod, boolean]> = [
    [
      'Never, main done, sidecar running',
      pod([
        ['main', undefined, 1],
        ['s', NORMAL, 'running'],
      ]),
      true,
    ],
    [
      'Never, main still running',
      pod([
        ['main', undefined, 'running'],
        ['s', NORMAL, 'running'],
      ]),
      false,
    ],
    [
      'OnFailure, main failed (the kubelet restarts it)',
      pod(
        [
          ['main', undefined, 1],
          ['s', NORMAL, 'running'],
        ],
        { policy: 'OnFailure' },
      ),
      false,
    ],
    [
      'OnFailure, main succeeded',
      pod(
        [
          ['main', undefined, 0],
          ['s', NORMAL, 'running'],
        ],
        { policy: 'OnFailure' },
      ),
      true,
    ],
    [
      'Always',
      pod(
        [
          ['main', undefined, 0],
          ['s', NORMAL, 'running'],
        ],
        { policy: 'Always' },
      ),
      false,
    ],
    [
      'restartPolicy unset means Always',
      pod(
        [
          ['main', undefined, 0],
          ['s', NORMAL, 'running'],
        ],
        { policy: '' },
      ),
      false,
    ],
    [
      'Pending',
      pod(
        [
          ['main', undefined, 0],
          ['s', NORMAL, 'running'],
        ],
        { phase: 'Pending' },
      ),
      false,
    ],
    [
      'deleting',
      pod(
        [
          ['main', undefined, 0],
          ['s', NORMAL, 'running'],
        ],
        { deleting: true },
      ),
      false,
    ],
    [
      'no sidecars',
      pod([
        ['main', undefined, 0],
        ['other', undefined, 'running'],
      ]),
      false,
    ],
    [
      'sidecars already done',
      pod([
        ['main', undefined, 0],
        ['s', NORMAL, 0],
      ]),
      false,
    ],
    [
      'a container not reported yet',
      pod([
        ['main', undefined, 0],
        ['s', NORMAL, 'running'],
        ['late', undefined, undefined],
      ]),
      false,
    ],
    [
      'env value is case-insensitive',
      pod([
        ['main', undefined, 0],
        ['s', [{ name: 'KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT', value: 'True' }], 'running'],
      ]),
      true,
    ],
  ];
  for (const [name, p, want] of cases) test(name, () => assert.equal(isInterestingPod(p), want));
});

describe('planSidecarTermination', () => {
  const now = T0;
  const terminated = (phase: 'Succeeded' | 'Failed') => ({
    kind: 'markTerminated',
    phase,
    condition: {
      type: 'SidecarTerminated',
      status: 'True',
      message: 'Terminated by Sidecar Terminator',
      lastTransitionTime: '2025-01-01T00:00:00Z',
    },
  });
  const table: Array<{ name: string; pod: Pod; vk?: boolean; crrExists?: boolean; want: unknown[] }> = [
    {
      name: 'normal sidecars: one CRR for the running ones',
      pod: pod([
        ['main', undefined, 0],
        ['b', NORMAL, 'running'],
        ['a', NORMAL, 'running'],
        ['done', NORMAL, 0],
      ]),
      want: [{ kind: 'createCRR', containers: ['a', 'b'] }],
    },
    {
      name: 'CRR already there: wait for it',
      pod: pod([
        ['main', undefined, 0],
        ['a', NORMAL, 'running'],
      ]),
      crrExists: true,
      want: [],
    },
    {
      name: 'not interesting: nothing',
      pod: pod([
        ['main', undefined, 'running'],
        ['a', NORMAL, 'running'],
      ]),
      want: [],
    },
    {
      name: 'virtual kubelet: swap the image of running sidecars in place',
      pod: pod([
        ['main', undefined, 0],
        ['c', IMAGE, 'running'],
        ['a', NORMAL, 'running'],
      ]),
      vk: true,
      want: [{ kind: 'inPlaceUpdate', images: { c: 'busybox:exit' } }],
    },
    {
      name: 'virtual kubelet: image already swapped, nothing more',
      pod: (() => {
        const p = pod([
          ['main', undefined, 0],
          ['c', IMAGE, 'running'],
        ]);
        p.spec!.containers![1].image = 'busybox:exit';
        return p;
      })(),
      vk: true,
      want: [],
    },
    {
      name: 'ignore-exit-code: pod marked Succeeded, then the sidecar killed',
      pod: pod([
        ['main', undefined, 0],
        ['b', IGNORE, 'running'],
      ]),
      want: [terminated('Succeeded'), { kind: 'createCRR', containers: ['b'] }],
    },
    {
      name: 'ignore-exit-code with a failed main container: Failed',
      pod: pod([
        ['main', undefined, 2],
        ['b', IGNORE, 'running'],
      ]),
      want: [terminated('Failed'), { kind: 'createCRR', containers: ['b'] }],
    },
    {
      name: 'ignore-exit-code waits while normal sidecars still run',
      pod: pod([
        ['main', undefined, 0],
        ['a', NORMAL, 'running'],
        ['b', IGNORE, 'running'],
      ]),
      want: [{ kind: 'createCRR', containers: ['a'] }],
    },
    {
      name: 'ignore-exit-code after normal sidecars ended: verdict, CRR name already taken by theirs',
      pod: pod([
        ['main', undefined, 0],
        ['a', NORMAL, 137],
        ['b', IGNORE, 'running'],
      ]),
      crrExists: true,
      want: [terminated('Succeeded')],
    },
    {
      name: 'pod already terminal: no second verdict',
      pod: pod(
        [
          ['main', undefined, 0],
          ['b', IGNORE, 'running'],
        ],
        { phase: 'Succeeded' },
      ),
      want: [{ kind: 'createCRR', containers: ['b'] }],
    },
  ];
  for (const c of table) {
    test(c.name, () =>
      assert.deepEqual(planSidecarTermination({ pod: c.pod, onVirtualKubelet: !!c.vk, crrExists: !!c.crrExists, now }), c.want),
    );
  }
});

describe('reconcileSidecarTerminator', () => {
  function deps(p: Pod, nodeLabels: Record<string, string> | undefined, createError?: number) {
    const calls: Array<{ verb: string; resource: string; body: any; opts?: any }> = [];
    const events: string[] = [];
    return {
      calls,
      events,
      cache: {
        getPod: () => p,
        getNode: () => (nodeLabels ? { metadata: { labels: nodeLabels } } : undefined),
        crrExists: () => false,
      },
      client: {
        async patch(type: any, _name: string, body: any, opts: any) {
          calls.push({ verb: 'patch', resource: opts.subresource ? `${type.resource}/${opts.subresource}` : type.resource, body, opts });
          return { metadata: { resourceVersion: '6' } };
        },
        async create(type: any, body: any) {
          calls.push({ verb: 'create', resource: type.resource, body });
          if (createError)
            throw new StatusError(
              { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: createError, message: 'denied' } as any,
              createError,
            );
          return body;
        },
      } as any,
      recorder: {
        event: (_o: any, type: string, reason: string, _a: string, note: string) => events.push(`${type} ${reason} ${note}`),
      } as any,
    };
  }

  test('normal node: the CRR spec and owner', async () => {
    const d = deps(
      pod([
        ['main', undefined, 0],
        ['s', NORMAL, 'running'],
      ]),
      { type: 'kwok' },
    );
    await reconcileSidecarTerminator('ns/job-pod', d);
    assert.equal(d.calls.length, 1);
    assert.deepEqual(d.calls[0].body, {
      apiVersion: 'apps.kruise.io/v1beta1',
      kind: 'ContainerRecreateRequest',
      metadata: {
        namespace: 'ns',
        name: 'sidecar-termination-u1',
        ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'job-pod', uid: 'u1', controller: true, blockOwnerDeletion: true }],
      },
      spec: { podName: 'job-pod', containers: [{ name: 's' }], strategy: { forceRecreate: true, failurePolicy: 'Ignore' } },
    });
    assert.deepEqual(d.events, ['Normal SidecarTerminator Kruise SidecarTerminator is trying to terminate sidecar ["s"] using crr']);
  });

  test('virtual-kubelet node: image patch carrying the pod resourceVersion', async () => {
    const d = deps(
      pod([
        ['main', undefined, 0],
        ['s', IMAGE, 'running'],
      ]),
      { type: 'virtual-kubelet' },
    );
    await reconcileSidecarTerminator('ns/job-pod', d);
    assert.deepEqual(
      d.calls.map((c) => [c.resource, c.body]),
      [['pods', { metadata: { resourceVersion: '5' }, spec: { containers: [{ name: 's', image: 'busybox:exit' }] } }]],
    );
  });

  test('ignore-exit-code: status verdict, then the CRR (which the webhook now admits for the terminal pod)', async () => {
    const d = deps(
      pod([
        ['main', undefined, 0],
        ['s', IGNORE, 'running'],
      ]),
      {},
    );
    await reconcileSidecarTerminator('ns/job-pod', d);
    assert.deepEqual(
      d.calls.map((c) => `${c.verb} ${c.resource}`),
      ['patch pods/status', 'create containerrecreaterequests'],
    );
    assert.equal(d.calls[0].body.status.phase, 'Succeeded');
  });

  test('a node not in the cache: retried, nothing written', async () => {
    const d = deps(
      pod([
        ['main', undefined, 0],
        ['s', NORMAL, 'running'],
      ]),
      undefined,
    );
    await assert.rejects(reconcileSidecarTerminator('ns/job-pod', d), /node n1 of pod ns\/job-pod not found/);
    assert.equal(d.calls.length, 0);
  });

  test('a refused CRR is reported on the pod and retried', async () => {
    const d = deps(
      pod([
        ['main', undefined, 0],
        ['s', NORMAL, 'running'],
      ]),
      {},
      400,
    );
    await assert.rejects(reconcileSidecarTerminator('ns/job-pod', d), /denied/);
    assert.match(d.events[0], /^Warning SidecarTerminator failed to create ContainerRecreateRequest sidecar-termination-u1: denied/);
  });

  test('an existing CRR the cache has not seen yet counts as created', async () => {
    const d = deps(
      pod([
        ['main', undefined, 0],
        ['s', NORMAL, 'running'],
      ]),
      {},
      409,
    );
    // 409 AlreadyExists is told apart from a Conflict by its reason.
    d.client.create = async (type: any, body: any) => {
      d.calls.push({ verb: 'create', resource: type.resource, body });
      throw new StatusError(
        { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 409, reason: 'AlreadyExists', message: 'exists' } as any,
        409,
      );
    };
    assert.deepEqual(await reconcileSidecarTerminator('ns/job-pod', d), {});
    assert.deepEqual(d.events, []);
  });
});
