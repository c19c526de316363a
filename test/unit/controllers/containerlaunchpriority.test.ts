// Container launch priority controller decisions (spec §18.1): barrier created, the highest pending
// priority released once those before it are ready, completed at the lowest.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Pod } from '../../../src/apis/core-objects.ts';
import { nextPriorities, planLaunchPriority } from '../../../src/controllers/containerlaunchpriority/plan.ts';
import { initializeContainerLaunchPriority } from '../../../src/webhooks/pod/index.ts';

function orderedPod(ready: string[] = []): Pod {
  const p = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'default', annotations: { 'apps.kruise.io/container-launch-priority': 'Ordered' } },
    spec: { containers: [{ name: 'a' }, { name: 'b' }, { name: 'c' }] },
  } as Pod;
  initializeContainerLaunchPriority(p, Math.random);
  p.status = { containerStatuses: ['a', 'b', 'c'].map((name) => ({ name, ready: ready.includes(name) })) } as Pod['status'];
  return p;
}

test('containers start from the highest priority down, each after the ones before are ready', () => {
  assert.deepEqual(nextPriorities(orderedPod()), [-2, -1, 0]);
  assert.deepEqual(planLaunchPriority(orderedPod(), undefined), { action: 'createBarrier' });
  assert.deepEqual(planLaunchPriority(orderedPod(), { data: {} }), { action: 'release', key: 'p_0', complete: false });
  // p_0 released, container a not ready yet: wait.
  assert.deepEqual(planLaunchPriority(orderedPod(), { data: { p_0: 'true' } }), { action: 'none' });
  assert.deepEqual(planLaunchPriority(orderedPod(['a']), { data: { p_0: 'true' } }), { action: 'release', key: 'p_-1', complete: false });
  assert.deepEqual(planLaunchPriority(orderedPod(['a', 'b']), { data: { p_0: 'true', 'p_-1': 'true' } }), {
    action: 'release',
    key: 'p_-2',
    complete: true,
  });
  const done = orderedPod(['a', 'b', 'c']);
  assert.deepEqual(planLaunchPriority(done, { data: { p_0: 'true', 'p_-1': 'true', 'p_-2': 'true' } }), { action: 'complete' });
  done.metadata.annotations!['apps.kruise.io/container-launch-priority-completed'] = 'true';
  assert.deepEqual(planLaunchPriority(done, { data: {} }), { action: 'none' });
});
