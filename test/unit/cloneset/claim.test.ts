// The CloneSet reconcile acts on the pods it claims: an owned pod whose labels stopped matching is
// released (ownerRef patched out, uid and resourceVersion preconditions) and replaced in the same
// round; a release that loses a race requeues; the node cache is synced before a spread-aware plan.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { CloneSetReconciler, type CloneSetCache } from '../../../src/controllers/cloneset/controller.ts';
import type { Pod } from '../../../src/controllers/cloneset/pods.ts';
import type { KubeObject, Stored } from '../../../src/apis/core-objects.ts';
import { StatusError } from '../../../src/runtime/errors.ts';
import type { ResourceType } from '../../../src/runtime/resources.ts';
import { WorkloadExpectations } from '../../../src/controllers/workload.ts';
import type { CloneSet } from '../../../src/apis/apps/cloneset.ts';
import { cloneSet, gates, NOW, pod, revisionOf, template } from './fixtures.ts';

interface Call {
  verb: string;
  resource: string;
  name: string;
  body?: any;
}

function setup(cs: CloneSet, pods: Pod[], opts: { failPatch?: () => Error | undefined; cache?: Partial<CloneSetCache> } = {}) {
  const calls: Call[] = [];
  let rv = 1000;
  const stamp = (obj: any) => ({ ...obj, metadata: { uid: `uid-${obj.metadata?.name}`, ...obj.metadata, resourceVersion: String(++rv) } });
  const client = {
    async create(type: ResourceType, obj: KubeObject) {
      calls.push({ verb: 'create', resource: type.resource, name: obj.metadata.name ?? '' });
      return stamp(obj);
    },
    async get(type: ResourceType, name: string) {
      calls.push({ verb: 'get', resource: type.resource, name });
      return stamp({ metadata: { name } });
    },
    async patch(type: ResourceType, name: string, body: any) {
      calls.push({ verb: 'patch', resource: type.resource, name, body });
      const err = opts.failPatch?.();
      if (err) throw err;
      return stamp({ metadata: { name, ...body.metadata } });
    },
    async delete(type: ResourceType, name: string) {
      calls.push({ verb: 'delete', resource: type.resource, name });
      return { metadata: {} };
    },
    async updateStatus(type: ResourceType, obj: KubeObject) {
      calls.push({ verb: 'updateStatus', resource: type.resource, name: obj.metadata.name ?? '' });
      return stamp(obj);
    },
  };
  const revision = revisionOf(cs);
  const cache: CloneSetCache = {
    getCloneSet: () => cs as Stored<CloneSet>,
    ownedPods: () => pods,
    ownedPVCs: () => [],
    ownedRevisions: () => [revision],
    ...opts.cache,
  };
  const expectations = new WorkloadExpectations();
  const { resourceVersions } = expectations;
  const reconciler = new CloneSetReconciler({
    cache,
    client: client as any,
    recorder: { event() {} } as any,
    features: gates(),
    log: pino({ level: 'silent' }),
    expectations,
    clock: { now: () => NOW, setTimer: () => ({ cancel() {} }), sleep: async () => {} },
    randomId: (() => {
      let i = 0;
      return () => `new${i++}`;
    })(),
  });
  return { reconciler, calls, resourceVersions, revision: revision.metadata.name! };
}

describe('CloneSet claiming in reconcile', () => {
  test('an owned pod whose labels stopped matching is released and replaced', async () => {
    const cs = cloneSet({ replicas: 2 });
    const rev = revisionOf(cs).metadata.name!;
    const relabelled = pod('cs-b', { revision: rev, labels: { app: 'elsewhere' } });
    relabelled.metadata.resourceVersion = '7';
    const { reconciler, calls, resourceVersions } = setup(cs, [pod('cs-a', { revision: rev }), relabelled]);
    await reconciler.reconcile('default/cs');

    const release = calls.find((c) => c.verb === 'patch' && c.name === 'cs-b');
    assert.deepEqual(release?.body, { metadata: { uid: 'uid-cs-b', resourceVersion: '7', ownerReferences: null } });
    assert.equal(calls.filter((c) => c.verb === 'create' && c.resource === 'pods').length, 1, 'a replacement');
    assert.ok(!calls.some((c) => c.verb === 'delete'), 'the released pod is not deleted');
    assert.ok(calls.findIndex((c) => c === release) < calls.findIndex((c) => c.verb === 'create'), 'released before planning');
    assert.equal(
      resourceVersions.isSatisfied({ metadata: { uid: 'uid-cs-b', resourceVersion: '7' } }).satisfied,
      false,
      'the next reconcile waits until the cache shows the release',
    );
  });

  test('a release that loses a race requeues without touching anything else', async () => {
    const cs = cloneSet({ replicas: 2 });
    const rev = revisionOf(cs).metadata.name!;
    const conflict = new StatusError({ status: 'Failure', code: 409, reason: 'Conflict', message: 'modified' } as any);
    const { reconciler, calls } = setup(cs, [pod('cs-a', { revision: rev }), pod('cs-b', { revision: rev, labels: { app: 'x' } })], {
      failPatch: () => conflict,
    });
    const result = await reconciler.reconcile('default/cs');
    assert.ok((result.requeueAfterMs ?? 0) > 0);
    assert.deepEqual(
      calls.map((c) => c.verb),
      ['patch'],
    );
  });

  test('a CloneSet with topologySpreadConstraints waits for the node cache before it plans', async () => {
    const cs = cloneSet({
      replicas: 1,
      template: template('nginx:1.0', {
        spec: {
          containers: [{ name: 'main', image: 'nginx:1.0' }],
          topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'ScheduleAnyway' }],
        } as any,
      }),
    });
    const rev = revisionOf(cs).metadata.name!;
    const order: string[] = [];
    let synced = false;
    const { reconciler } = setup(cs, [pod('cs-a', { revision: rev, node: 'n1' }), pod('cs-b', { revision: rev, node: 'n2' })], {
      cache: {
        syncNodes: async () => {
          await new Promise((r) => setTimeout(r, 5));
          synced = true;
          order.push('synced');
        },
        nodeLabels: (node) => {
          order.push(`read ${node} ${synced ? 'after' : 'before'} sync`);
          return { zone: node };
        },
      },
    });
    await reconciler.reconcile('default/cs');
    assert.equal(order[0], 'synced');
    assert.ok(order.length > 1 && order.slice(1).every((o) => o.endsWith('after sync')), order.join(', '));
  });

  test('without spread constraints the node cache is not opened', async () => {
    const cs = cloneSet({ replicas: 1 });
    let opened = false;
    const { reconciler } = setup(
      cs,
      [pod('cs-a', { revision: revisionOf(cs).metadata.name! }), pod('cs-b', { revision: revisionOf(cs).metadata.name! })],
      {
        cache: { syncNodes: async () => void (opened = true) },
      },
    );
    await reconciler.reconcile('default/cs');
    assert.equal(opened, false);
  });
});
