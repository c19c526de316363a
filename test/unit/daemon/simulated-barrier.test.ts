// The simulated kubelet's launch barrier (src/daemon/simulated/barrier.ts): which containers KWOK
// left waiting on a barrier key, and the pod status once the keys that exist let them start.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Pod } from '../../../src/apis/core-objects.ts';
import { heldContainers, releasedStatus } from '../../../src/daemon/simulated/barrier.ts';
import { simulatedContainerID, simulatedImageID } from '../../../src/daemon/simulated/runtime.ts';

const NOW = Date.parse('2026-11-24T06:30:00Z');
const barrier = (key: string) => [{ name: 'KRUISE_CONTAINER_BARRIER', valueFrom: { configMapKeyRef: { name: 'p-barrier', key } } }];

/** As KWOK's pod-start stage leaves a pod whose containers all wait on a barrier. */
function heldPod(): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'ns', uid: 'uid-1', resourceVersion: '7' },
    spec: {
      containers: [
        { name: 'a', image: 'a:1', env: barrier('p_0') },
        { name: 'b', image: 'b:1', env: barrier('p_-1') },
      ],
    },
    status: {
      phase: 'Running',
      conditions: [
        { type: 'ContainersReady', status: 'False', reason: 'ContainersNotReady' },
        { type: 'Ready', status: 'False', reason: 'ContainersNotReady' },
      ],
      containerStatuses: ['a', 'b'].map((n) => ({
        name: n,
        image: `${n}:1`,
        ready: false,
        started: false,
        restartCount: 0,
        state: { waiting: { reason: 'CreateContainerConfigError' } },
      })),
    },
  } as Pod;
}

describe('simulated launch barrier', () => {
  test('held containers and the keys they wait for', () => {
    assert.deepEqual(heldContainers(heldPod()), [
      { name: 'a', configMap: 'p-barrier', key: 'p_0' },
      { name: 'b', configMap: 'p-barrier', key: 'p_-1' },
    ]);
  });

  test('no key yet: nothing starts', () => {
    assert.equal(releasedStatus(heldPod(), new Set(), NOW), undefined);
    assert.equal(releasedStatus(heldPod(), new Set(['p_1']), NOW), undefined);
  });

  test('p_0 starts a only; the pod stays not ready', () => {
    const s = releasedStatus(heldPod(), new Set(['p_0']), NOW)!;
    assert.deepEqual(s.containerStatuses[0], {
      name: 'a',
      image: 'a:1',
      imageID: simulatedImageID('a:1'),
      containerID: simulatedContainerID('uid-1', 'a', 0),
      ready: true,
      started: true,
      restartCount: 0,
      state: { running: { startedAt: '2026-11-24T06:30:00Z' } },
    });
    assert.equal(s.containerStatuses[1]!.state?.waiting?.reason, 'CreateContainerConfigError');
    assert.deepEqual(
      s.conditions.map((c) => [c.type, c.status]),
      [
        ['ContainersReady', 'False'],
        ['Ready', 'False'],
      ],
    );
  });

  test('a container with a postStart hook starts not ready: the next priority waits for the hook (pod-poststart)', () => {
    const pod = heldPod();
    pod.spec!.containers[0]!.lifecycle = { postStart: { exec: { command: ['/bin/sh', '-c', 'sleep 1'] } } };
    const s = releasedStatus(pod, new Set(['p_0']), NOW)!;
    assert.equal(s.containerStatuses[0]!.ready, false);
    assert.deepEqual(s.containerStatuses[0]!.state, { running: { startedAt: '2026-11-24T06:30:00Z' } });
    assert.equal(s.conditions.find((c) => c.type === 'ContainersReady')?.status, 'False');
  });

  test('the last key starts the rest: ContainersReady and Ready turn True (Ready waits for readiness gates)', () => {
    const pod = heldPod();
    pod.status = { ...pod.status, ...releasedStatus(pod, new Set(['p_0']), NOW)! };
    assert.deepEqual(heldContainers(pod), [{ name: 'b', configMap: 'p-barrier', key: 'p_-1' }]);
    const s = releasedStatus(pod, new Set(['p_0', 'p_-1']), NOW)!;
    assert.ok(s.containerStatuses.every((c) => c.ready));
    assert.deepEqual(
      s.conditions.map((c) => [c.type, c.status]),
      [
        ['ContainersReady', 'True'],
        ['Ready', 'True'],
      ],
    );
    pod.spec!.readinessGates = [{ conditionType: 'KruisePodReady' }];
    const gated = releasedStatus(pod, new Set(['p_0', 'p_-1']), NOW)!;
    assert.deepEqual(gated.conditions.at(-1), {
      type: 'Ready',
      status: 'False',
      reason: 'ReadinessGatesNotReady',
    });
  });
});
