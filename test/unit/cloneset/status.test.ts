import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { computeStatus } from '../../../src/controllers/cloneset/status.ts';
import { cloneSet, NOW, pod, type CloneSetSpec } from './fixtures.ts';
import type { Pod } from '../../../src/apis/core-objects.ts';

const OLD = 'cs-old';
const NEW = 'cs-new';

function status(spec: Partial<CloneSetSpec>, pods: Pod[], prev?: Parameters<typeof cloneSet>[1]) {
  return computeStatus({ cloneSet: cloneSet(spec, prev), pods, currentRevision: OLD, updateRevision: NEW, collisionCount: 0, nowMs: NOW });
}

describe('computeStatus', () => {
  it('counts replicas, ready, available and updated', () => {
    const inPlaceHeld = pod('d', {
      revision: NEW,
      conditions: [
        { type: 'Ready', status: 'True', lastTransitionTime: '2026-07-01T10:00:00Z' },
        { type: 'InPlaceUpdateReady', status: 'False' },
      ],
    });
    const { status: s } = status({ replicas: 4 }, [
      pod('a', { revision: NEW }),
      pod('b', { revision: OLD }),
      pod('c', { revision: NEW, state: 'PreparingUpdate' }),
      inPlaceHeld,
    ]);
    assert.deepEqual(
      [s.replicas, s.readyReplicas, s.availableReplicas, s.updatedReplicas, s.updatedReadyReplicas, s.updatedAvailableReplicas],
      [4, 3, 2, 3, 2, 1],
    );
    assert.equal(s.currentRevision, OLD);
    assert.equal(s.labelSelector, 'app=demo');
    assert.equal(s.observedGeneration, 1);
  });

  it('minReadySeconds gates availability and asks for a requeue', () => {
    const r = status({ replicas: 1, minReadySeconds: 3600 }, [pod('a', { revision: NEW, readySince: '2026-07-01T11:59:00Z' })]);
    assert.equal(r.status.readyReplicas, 1);
    assert.equal(r.status.availableReplicas, 0);
    assert.equal(r.requeueAfterMs, 3_600_000);
  });

  it('currentRevision advances once every pod is updated (readiness not required)', () => {
    const r = status({ replicas: 2 }, [pod('a', { revision: NEW, ready: false }), pod('b', { revision: NEW })]);
    assert.equal(r.status.currentRevision, NEW);
    assert.equal(status({ replicas: 3 }, [pod('a', { revision: NEW })]).status.currentRevision, OLD);
  });

  const partitions: Array<[number, number | string | undefined, number]> = [
    [8, '90%', 1],
    [8, '100%', 0],
    [5, 2, 3],
    [5, undefined, 5],
    [10, '25%', 7],
  ];
  for (const [replicas, partition, want] of partitions) {
    it(`expectedUpdatedReplicas: replicas ${replicas} partition ${partition} → ${want}`, () => {
      assert.equal(status({ replicas, updateStrategy: { rollingUpdate: { partition } } }, []).status.expectedUpdatedReplicas, want);
    });
  }

  it('Progressing condition only with progressDeadlineSeconds', () => {
    assert.equal(status({ replicas: 1 }, [pod('a', { revision: OLD })]).status.conditions, undefined);
    const r = status({ replicas: 1, progressDeadlineSeconds: 600 }, [pod('a', { revision: OLD })]);
    assert.deepEqual(
      r.status.conditions!.map((c) => [c.type, c.status, c.reason]),
      [['Progressing', 'True', 'CloneSetUpdated']],
    );
    assert.equal(r.requeueAfterMs, 601_000);
    const done = computeStatus({
      cloneSet: cloneSet({ replicas: 1, progressDeadlineSeconds: 600 }),
      pods: [pod('a', { revision: NEW })],
      currentRevision: NEW,
      updateRevision: NEW,
      collisionCount: 0,
      nowMs: NOW,
    });
    assert.equal(done.status.conditions![0].reason, 'CloneSetAvailable');
    const late = status({ replicas: 1, progressDeadlineSeconds: 600 }, [pod('a', { revision: OLD })], {
      replicas: 1,
      readyReplicas: 1,
      availableReplicas: 1,
      updatedReplicas: 0,
      updatedReadyReplicas: 0,
      conditions: [
        {
          type: 'Progressing',
          status: 'True',
          reason: 'CloneSetUpdated',
          lastUpdateTime: '2026-07-01T11:00:00Z',
          lastTransitionTime: '2026-07-01T11:00:00Z',
        },
      ],
    });
    assert.deepEqual([late.status.conditions![0].status, late.status.conditions![0].reason], ['False', 'ProgressDeadlineExceeded']);
  });

  it('changed is false when nothing differs', () => {
    const first = status({ replicas: 1 }, [pod('a', { revision: NEW })]);
    const again = status({ replicas: 1 }, [pod('a', { revision: NEW })], first.status);
    assert.equal(first.changed, true);
    assert.equal(again.changed, false);
  });
});
