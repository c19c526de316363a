import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { reconcilePodReadiness } from '../../../src/controllers/podreadiness/controller.ts';
import { planPodReadiness } from '../../../src/controllers/podreadiness/plan.ts';
import type { Pod } from '../../../src/apis/core-objects.ts';
import { StatusError } from '../../../src/runtime/errors.ts';
import { FakeClock } from '../../../src/util/clock.ts';

const T0 = Date.parse('2025-01-01T00:00:00Z');

function pod(o: { gate?: boolean; condition?: string; deleting?: boolean } = {}): Pod {
  return {
    metadata: { name: 'p', namespace: 'ns', resourceVersion: '3', ...(o.deleting ? { deletionTimestamp: '2025-01-01T00:00:00Z' } : {}) },
    spec: { containers: [], ...(o.gate === false ? {} : { readinessGates: [{ conditionType: 'KruisePodReady' }] }) },
    status: { conditions: o.condition ? [{ type: 'KruisePodReady', status: o.condition }] : [{ type: 'Ready', status: 'False' }] },
  };
}

describe('planPodReadiness', () => {
  const cases: Array<[string, Pod, boolean]> = [
    ['gate without condition: initialise True', pod(), true],
    ['no gate', pod({ gate: false }), false],
    ['condition already there (even False, held by someone)', pod({ condition: 'False' }), false],
    ['deleting', pod({ deleting: true }), false],
  ];
  for (const [name, p, want] of cases) {
    test(name, () => {
      const c = planPodReadiness(p, T0);
      assert.deepEqual(c, want ? { type: 'KruisePodReady', status: 'True', lastTransitionTime: '2025-01-01T00:00:00Z' } : undefined);
    });
  }
});

describe('reconcilePodReadiness', () => {
  const client = (code?: number) => {
    const calls: any[] = [];
    return {
      calls,
      async patch(_t: any, name: string, body: any, opts: any) {
        calls.push({ name, body, opts });
        if (code) throw new StatusError({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, message: 'x' } as any, code);
        return {};
      },
    };
  };
  test('strategic-merge status patch, compare-and-swap on the resourceVersion', async () => {
    const c = client();
    await reconcilePodReadiness('ns/p', { getPod: () => pod(), client: c as any, clock: new FakeClock(T0) });
    assert.deepEqual(c.calls, [
      {
        name: 'p',
        body: {
          metadata: { resourceVersion: '3' },
          status: { conditions: [{ type: 'KruisePodReady', status: 'True', lastTransitionTime: '2025-01-01T00:00:00Z' }] },
        },
        opts: { namespace: 'ns', patchType: 'application/strategic-merge-patch+json', subresource: 'status' },
      },
    ]);
  });
  test('nothing to do, no write', async () => {
    const c = client();
    await reconcilePodReadiness('ns/p', { getPod: () => pod({ condition: 'True' }), client: c as any });
    await reconcilePodReadiness('ns/p', { getPod: () => undefined, client: c as any });
    assert.equal(c.calls.length, 0);
  });
  test('a conflict retries soon; a vanished pod is done', async () => {
    assert.deepEqual(await reconcilePodReadiness('ns/p', { getPod: () => pod(), client: client(409) as any }), { requeueAfterMs: 1000 });
    assert.deepEqual(await reconcilePodReadiness('ns/p', { getPod: () => pod(), client: client(404) as any }), {});
  });
});
