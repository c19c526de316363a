// NodeImage controller decisions, table-style: creation after the Ready delay, deletion with the
// Node (not for fake NodeImages), spec cleanup, response-timeout / deadline failures and recounts;
// plus the reconciler's writes and events against a recording client.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { StatusError } from '../../../src/runtime/errors.ts';
import { ResourceVersionExpectations } from '../../../src/runtime/expectations.ts';
import { makeNodeImageHandlers, NodeImageReconciler } from '../../../src/controllers/nodeimage/controller.ts';
import {
  cleanSpec,
  FAKE_NODEIMAGE_LABEL,
  MSG_DEADLINE,
  MSG_NOT_RESPONDED,
  nodeReadiness,
  planNodeImage,
  planStatus,
} from '../../../src/controllers/nodeimage/plan.ts';
import { type NodeImage } from '../../../src/controllers/imagejobs/resources.ts';
import type { Node } from '../../../src/apis/core-objects.ts';
import { metaTime } from '../../../src/util/clock.ts';

const NOW = Date.parse('2026-01-01T12:00:00Z');
const ago = (s: number) => metaTime(NOW - s * 1000);
const IMG = 'docker.io/library/nginx';
const owner = (name: string, uid: string) => ({ apiVersion: 'apps.kruise.io/v1beta1', kind: 'ImagePullJob', namespace: 'ns', name, uid });

function node(readyFor: number | undefined, labels: Record<string, string> = { type: 'kwok' }): Node {
  return {
    metadata: { name: 'n1', labels },
    status: {
      conditions:
        readyFor === undefined
          ? [{ type: 'Ready', status: 'False' }]
          : [{ type: 'Ready', status: 'True', lastTransitionTime: ago(readyFor) }],
    },
  };
}

function ni(
  images: NonNullable<NodeImage['spec']>['images'] = {},
  imageStatuses?: NonNullable<NodeImage['status']>['imageStatuses'],
  labels: Record<string, string> = { type: 'kwok' },
): NodeImage {
  return {
    metadata: { name: 'n1', uid: 'ni-uid', resourceVersion: '10', labels },
    spec: { images },
    status: { desired: 0, ...(imageStatuses ? { imageStatuses } : {}) },
  };
}

const tag = (t: string, extra: Record<string, unknown> = {}) => ({
  tag: t,
  version: 0,
  createdAt: ago(10),
  pullPolicy: { ttlSecondsAfterFinished: 300 },
  ownerReferences: [owner('job', 'u1')],
  ...extra,
});
const jobs = (known: Record<string, string>) => (_ns: string, name: string) => known[name] ?? null;
const noSecrets = () => undefined;

describe('nodeReadiness', () => {
  const cases: Array<[string, Node, { ready: boolean; waitMs: number }]> = [
    ['not ready', node(undefined), { ready: false, waitMs: 0 }],
    ['ready 10s ago waits the rest of 30s', node(10), { ready: true, waitMs: 20_000 }],
    ['ready long ago', node(100), { ready: true, waitMs: 0 }],
    ['no conditions', { metadata: { name: 'x' } }, { ready: false, waitMs: 0 }],
  ];
  for (const [name, n, want] of cases) test(name, () => assert.deepEqual(nodeReadiness(n, NOW, 30_000), want));
});

describe('planNodeImage: lifecycle', () => {
  const base = { nowMs: NOW, creationDelayMs: 30_000, jobUID: jobs({ job: 'u1' }), secretExists: noSecrets };
  const cases: Array<[string, Parameters<typeof planNodeImage>[0], string, number?]> = [
    ['creates for a node ready long enough', { ...base, node: node(60), nodeImage: undefined }, 'create'],
    ['waits out the creation delay', { ...base, node: node(5), nodeImage: undefined }, 'none', 25_000],
    ['nothing for a node not ready', { ...base, node: node(undefined), nodeImage: undefined }, 'none'],
    ['deletes when the node is gone', { ...base, node: undefined, nodeImage: ni() }, 'delete'],
    [
      'deletes when the node is being deleted',
      { ...base, node: { ...node(60), metadata: { name: 'n1', deletionTimestamp: ago(1) } }, nodeImage: ni() },
      'delete',
    ],
    [
      'keeps a fake NodeImage without node',
      { ...base, node: undefined, nodeImage: ni({}, undefined, { [FAKE_NODEIMAGE_LABEL]: 'true' }) },
      'none',
    ],
    ['nothing when both are gone', { ...base, node: undefined, nodeImage: undefined }, 'none'],
    ['copies changed node labels', { ...base, node: node(60, { type: 'kwok', zone: 'a' }), nodeImage: ni() }, 'updateSpec'],
    ['nothing when in sync', { ...base, node: node(60), nodeImage: ni() }, 'none'],
  ];
  for (const [name, input, action, wait] of cases) {
    test(name, () => {
      const plan = planNodeImage(input);
      assert.equal(plan.action, action);
      if (wait !== undefined) assert.equal((plan as { requeueAfterMs?: number }).requeueAfterMs, wait);
    });
  }
  test('create carries the node labels', () => {
    assert.deepEqual(planNodeImage({ ...base, node: node(60), nodeImage: undefined }), { action: 'create', labels: { type: 'kwok' } });
  });
});

describe('cleanSpec', () => {
  const cases: Array<[string, NodeImage, Record<string, string>, string[] | undefined]> = [
    ['keeps owned tags', ni({ [IMG]: { tags: [tag('1')] } }), { job: 'u1' }, ['1']],
    ['drops tags without createdAt', ni({ [IMG]: { tags: [tag('1', { createdAt: undefined }), tag('2')] } }), { job: 'u1' }, ['2']],
    ['drops tags whose job is gone (and the empty image)', ni({ [IMG]: { tags: [tag('1')] } }), {}, undefined],
    [
      'drops owner refs with a different uid',
      ni({ [IMG]: { tags: [tag('1', { ownerReferences: [owner('job', 'old'), owner('other', 'u2')] })] } }),
      { job: 'u1', other: 'u2' },
      ['1'],
    ],
    [
      'keeps non-ImagePullJob owners',
      ni({ [IMG]: { tags: [tag('1', { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'd', uid: 'x' }] })] } }),
      {},
      ['1'],
    ],
    [
      'drops tags past TTL since completion of the same version',
      ni(
        { [IMG]: { tags: [tag('1'), tag('2')] } },
        {
          [IMG]: {
            tags: [
              { tag: '1', phase: 'Succeeded', version: 0, completionTime: ago(301) },
              { tag: '2', phase: 'Succeeded', version: 0, completionTime: ago(100) },
            ],
          },
        },
      ),
      { job: 'u1' },
      ['2'],
    ],
    [
      'a completion of another version does not count',
      ni(
        { [IMG]: { tags: [tag('1', { version: 2 })] } },
        { [IMG]: { tags: [{ tag: '1', phase: 'Succeeded', version: 1, completionTime: ago(1000) }] } },
      ),
      { job: 'u1' },
      ['1'],
    ],
  ];
  for (const [name, obj, known, wantTags] of cases) {
    test(name, () => {
      const r = cleanSpec(obj, jobs(known), noSecrets, NOW);
      assert.deepEqual(
        r.images[IMG]?.tags.map((t) => t.tag),
        wantTags,
      );
    });
  }
  test('an owner refs change keeps the remaining owners', () => {
    const r = cleanSpec(
      ni({ [IMG]: { tags: [tag('1', { ownerReferences: [owner('job', 'u1'), owner('gone', 'u9')] })] } }),
      jobs({ job: 'u1' }),
      noSecrets,
      NOW,
    );
    assert.equal(r.modified, true);
    assert.deepEqual(r.images[IMG]!.tags[0]!.ownerReferences, [owner('job', 'u1')]);
  });
  test('an unknown job (not watched) is kept', () => {
    const r = cleanSpec(ni({ [IMG]: { tags: [tag('1')] } }), () => undefined, noSecrets, NOW);
    assert.equal(r.modified, false);
  });
  test('TTL wait is reported for requeueing', () => {
    const r = cleanSpec(
      ni({ [IMG]: { tags: [tag('1')] } }, { [IMG]: { tags: [{ tag: '1', phase: 'Succeeded', version: 0, completionTime: ago(100) }] } }),
      jobs({ job: 'u1' }),
      noSecrets,
      NOW,
    );
    assert.equal(r.requeueAfterMs, 200_000);
  });
  test('old-style secrets that are gone are dropped, batch ones and unknown ones kept', () => {
    const secrets = [
      { namespace: 'kruise-daemon-config', name: 'gone' },
      { namespace: 'kruise-daemon-config', name: 'there' },
      { namespace: 'kruise-daemon-config', name: 'copy', mode: 'batch' as const },
      { namespace: 'elsewhere', name: 'unknown' },
    ];
    const exists = (ns: string, name: string) => (ns === 'kruise-daemon-config' ? name === 'there' : undefined);
    const r = cleanSpec(ni({ [IMG]: { pullSecrets: secrets, tags: [tag('1')] } }), jobs({ job: 'u1' }), exists, NOW);
    assert.equal(r.modified, true);
    assert.deepEqual(
      r.images[IMG]!.pullSecrets!.map((s) => s.name),
      ['there', 'copy', 'unknown'],
    );
  });
  test('tags are sorted', () => {
    const r = cleanSpec(ni({ [IMG]: { tags: [tag('b'), tag('a')] } }), jobs({ job: 'u1' }), noSecrets, NOW);
    assert.deepEqual(
      r.images[IMG]!.tags.map((t) => t.tag),
      ['a', 'b'],
    );
    assert.equal(r.modified, true);
  });
});

describe('planStatus', () => {
  test('a tag the daemon has not answered for 60s fails', () => {
    const plan = planStatus(ni({ [IMG]: { tags: [tag('1', { createdAt: ago(61), version: 3 })] } }), NOW);
    const st = plan.status!.imageStatuses![IMG]!.tags[0]!;
    assert.deepEqual(st, { tag: '1', phase: 'Failed', completionTime: metaTime(NOW), version: 3, message: MSG_NOT_RESPONDED });
    assert.equal(plan.status!.failed, 1);
    assert.equal(plan.status!.desired, 1);
    assert.equal(plan.failures.length, 1);
    assert.equal(plan.failures[0]!.fullName, `${IMG}:1`);
  });
  test('a lagging version within 60s only waits', () => {
    const plan = planStatus(
      ni(
        { [IMG]: { tags: [tag('1', { createdAt: ago(20), version: 2 })] } },
        { [IMG]: { tags: [{ tag: '1', phase: 'Succeeded', version: 1 }] } },
      ),
      NOW,
    );
    assert.equal(plan.failures.length, 0);
    assert.equal(plan.requeueAfterMs, 40_000);
  });
  test('an unfinished tag past activeDeadlineSeconds + 60s fails', () => {
    const t = tag('1', { createdAt: ago(200), pullPolicy: { ttlSecondsAfterFinished: 300, activeDeadlineSeconds: 120 } });
    const plan = planStatus(ni({ [IMG]: { tags: [t] } }, { [IMG]: { tags: [{ tag: '1', phase: 'Pulling', version: 0 }] } }), NOW);
    assert.equal(plan.status!.imageStatuses![IMG]!.tags[0]!.message, MSG_DEADLINE);
    assert.equal(plan.status!.imageStatuses![IMG]!.tags[0]!.phase, 'Failed');
  });
  test('an unfinished tag before its deadline waits for it', () => {
    const t = tag('1', { createdAt: ago(100), pullPolicy: { ttlSecondsAfterFinished: 300, activeDeadlineSeconds: 120 } });
    const plan = planStatus(ni({ [IMG]: { tags: [t] } }, { [IMG]: { tags: [{ tag: '1', phase: 'Pulling', version: 0 }] } }), NOW);
    assert.equal(plan.requeueAfterMs, 80_000);
  });
  test('counts are recomputed and statuses of removed tags dropped', () => {
    const obj = ni(
      { [IMG]: { tags: [tag('1'), tag('2'), tag('3'), tag('4')] } },
      {
        [IMG]: {
          tags: [
            { tag: '1', phase: 'Succeeded', version: 0 },
            { tag: '2', phase: 'Pulling', version: 0 },
            { tag: '3', phase: 'Waiting', version: 0 },
            { tag: '4', phase: 'Failed', version: 0 },
            { tag: 'gone', phase: 'Succeeded', version: 0 },
          ],
        },
        'docker.io/library/removed': { tags: [{ tag: 'x', phase: 'Succeeded' }] },
      },
    );
    const plan = planStatus(obj, NOW);
    assert.deepEqual(
      { ...plan.status, imageStatuses: undefined },
      { desired: 4, succeeded: 1, pulling: 1, waiting: 1, failed: 1, imageStatuses: undefined },
    );
    assert.deepEqual(Object.keys(plan.status!.imageStatuses!), [IMG]);
    assert.equal(plan.status!.imageStatuses![IMG]!.tags.length, 4);
  });
  test('nothing to write when the daemon already wrote the same', () => {
    const obj = ni({ [IMG]: { tags: [tag('1')] } }, { [IMG]: { tags: [{ tag: '1', phase: 'Succeeded', version: 0 }] } });
    obj.status = { ...obj.status!, desired: 1, succeeded: 1 };
    assert.equal(planStatus(obj, NOW).status, undefined);
  });
});

class Recorder {
  events: Array<{ regarding: any; reason: string; note: string }> = [];
  event(regarding: any, _type: string, reason: string, _action: string, note: string) {
    this.events.push({ regarding, reason, note });
  }
}

function reconciler(nodeObj: Node | undefined, obj: NodeImage | undefined, fail?: Error) {
  const calls: Array<{ verb: string; obj?: any; opts?: any }> = [];
  const client = {
    async create(_t: unknown, o: any) {
      calls.push({ verb: 'create', obj: o });
      if (fail) throw fail;
      return { ...o, metadata: { ...o.metadata, uid: 'new', resourceVersion: '11' } };
    },
    async update(_t: unknown, o: any) {
      calls.push({ verb: 'update', obj: o });
      if (fail) throw fail;
      return { ...o, metadata: { ...o.metadata, resourceVersion: '12' } };
    },
    async delete(_t: unknown, name: string, opts: any) {
      calls.push({ verb: 'delete', obj: name, opts });
      return {};
    },
    async updateStatus(_t: unknown, o: any) {
      calls.push({ verb: 'updateStatus', obj: o });
      if (fail) throw fail;
      return { ...o, metadata: { ...o.metadata, resourceVersion: '13' } };
    },
  };
  const recorder = new Recorder();
  const r = new NodeImageReconciler({
    cache: { getNode: () => nodeObj as any, getNodeImage: () => obj, jobUID: jobs({ job: 'u1' }), secretExists: () => undefined },
    client: client as any,
    recorder: recorder as any,
    log: pino({ level: 'silent' }),
    resourceVersions: new ResourceVersionExpectations(),
    clock: { now: () => NOW, setTimer: () => ({ cancel() {} }), sleep: async () => {} },
    jitter: () => 0,
  });
  return { r, calls, recorder };
}

describe('NodeImageReconciler', () => {
  test('creates the NodeImage with the node labels', async () => {
    const { r, calls } = reconciler(node(60), undefined);
    assert.deepEqual(await r.reconcile('n1'), {});
    assert.deepEqual(
      calls.map((c) => c.verb),
      ['create'],
    );
    assert.deepEqual(calls[0]!.obj.metadata, { name: 'n1', labels: { type: 'kwok' } });
  });
  test('deletes with a uid precondition when the node is gone', async () => {
    const { r, calls } = reconciler(undefined, ni());
    await r.reconcile('n1');
    assert.deepEqual(calls, [{ verb: 'delete', obj: 'n1', opts: { preconditions: { uid: 'ni-uid' } } }]);
  });
  test('marks a silent node failed and tells the owners', async () => {
    const { r, calls, recorder } = reconciler(node(600), ni({ [IMG]: { tags: [tag('1', { createdAt: ago(90) })] } }));
    const res = await r.reconcile('n1');
    assert.deepEqual(
      calls.map((c) => c.verb),
      ['updateStatus'],
    );
    assert.equal(calls[0]!.obj.metadata.resourceVersion, '10', 'written against the version read');
    assert.deepEqual(
      recorder.events.map((e) => [e.reason, e.regarding.kind]),
      [
        ['PullImageFailed', 'ImagePullJob'],
        ['PullImageFailed', undefined],
      ],
    );
    assert.match(recorder.events[0]!.note, /Failed to pull image docker.io\/library\/nginx:1 on node n1 for node has not responded/);
    assert.equal(res.requeueAfterMs, undefined);
  });
  test('a conflict requeues instead of failing', async () => {
    const conflict = new StatusError({ status: 'Failure', code: 409, reason: 'Conflict', message: 'modified' } as any);
    const { r } = reconciler(node(600, { other: 'x' }), ni(), conflict);
    assert.deepEqual(await r.reconcile('n1'), { requeueAfterMs: 1000 });
  });
  test('a time-based wait is at least 3s', async () => {
    const { r } = reconciler(node(600), ni({ [IMG]: { tags: [tag('1', { createdAt: ago(59) })] } }));
    assert.deepEqual(await r.reconcile('n1'), { requeueAfterMs: 3000 });
  });
});

describe('node event handler', () => {
  test('a ready node without NodeImage is queued after the remaining delay', () => {
    const added: string[] = [];
    const after: Array<[string, number]> = [];
    const h = makeNodeImageHandlers({
      queue: { add: (k) => added.push(k), addAfter: (k, ms) => after.push([k, ms]) },
      resourceVersions: new ResourceVersionExpectations(),
      getNodeImage: () => undefined,
      listNodeImages: () => [],
      creationDelayMs: 30_000,
      now: () => NOW,
    });
    h.node.onAdd!(node(10) as any, false);
    h.node.onAdd!(node(undefined) as any, false);
    h.node.onAdd!(node(100) as any, false);
    assert.deepEqual(after, [['n1', 20_000]]);
    assert.deepEqual(added, ['n1']);
  });
  test('a deleted ImagePullJob queues the NodeImages it wrote to', () => {
    const added: string[] = [];
    const h = makeNodeImageHandlers({
      queue: { add: (k) => added.push(k), addAfter: () => {} },
      resourceVersions: new ResourceVersionExpectations(),
      getNodeImage: () => undefined,
      listNodeImages: () => [ni({ [IMG]: { tags: [tag('1')] } }), { ...ni(), metadata: { name: 'n2' } }],
      creationDelayMs: 30_000,
      now: () => NOW,
    });
    h.job.onDelete!({ metadata: { name: 'job', namespace: 'ns', uid: 'u1' } } as any);
    assert.deepEqual(added, ['n1']);
  });
});
