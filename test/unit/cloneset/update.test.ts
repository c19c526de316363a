import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { planUpdate, sortByPriority, sortByScatter, sortUpdateIndexes, type UpdateInput } from '../../../src/controllers/cloneset/update.ts';
import type { Pod } from '../../../src/apis/core-objects.ts';
import type { UpdatePriorityStrategy } from '../../../src/apis/apps/pub.ts';
import { cloneSet, gates, NOW, pod, revisionOf, template, type CloneSetSpec, type PodOpts } from './fixtures.ts';

const csOld = cloneSet({ template: template('nginx:1.0') });
const revOld = revisionOf(csOld, 1);
const OLD = revOld.metadata.name!;

function setup(spec: Partial<CloneSetSpec>, pods: Pod[], newTemplate = template('nginx:2.0'), extra: Partial<UpdateInput> = {}): UpdateInput {
  const cs = cloneSet({ replicas: pods.length, ...spec, template: newTemplate }, { replicas: pods.length, readyReplicas: 0, availableReplicas: 0, updatedReplicas: 0, updatedReadyReplicas: 0, currentRevision: OLD });
  const revNew = revisionOf(cs, 2);
  return { cloneSet: cs, revisions: [revOld, revNew], currentRevision: revOld, updateRevision: revNew, pods, nowMs: NOW, features: gates(), ...extra };
}

const O = (name: string, o: PodOpts = {}) => pod(name, { revision: OLD, state: 'Normal', ...o });
const inPlace = (over: object = {}) => ({ updateStrategy: { rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible', maxUnavailable: 1, ...over } } });

describe('planUpdate', () => {
  it('InPlaceIfPossible: in-place image update plan', () => {
    const plan = planUpdate(setup(inPlace(), [O('cs-a'), O('cs-b')]));
    assert.equal(plan.inPlaceUpdates.length, 1);
    const u = plan.inPlaceUpdates[0];
    assert.equal(u.updatedPod.spec!.containers[0].image, 'nginx:2.0');
    assert.equal(u.updatedPod.metadata.labels!['lifecycle.apps.kruise.io/state'], 'Updating');
    assert.equal(u.updatedPod.metadata.labels!['controller-revision-hash'], u.revision);
    assert.equal(u.conditions!.find((c) => c.type === 'InPlaceUpdateReady')!.status, 'False');
    assert.equal(plan.events[0].reason, 'SuccessfulUpdatePodInPlace');
  });

  it('ReCreate marks pods specified-delete within maxUnavailable', () => {
    const plan = planUpdate(setup({ updateStrategy: { rollingUpdate: { maxUnavailable: 2 } } }, [O('cs-a'), O('cs-b'), O('cs-c')]));
    assert.equal(plan.labelPatches.length, 2);
    assert.deepEqual(plan.labelPatches[0].labels, { 'apps.kruise.io/specified-delete': 'true' });
    assert.equal(plan.inPlaceUpdates.length, 0);
  });

  it('InPlaceIfPossible falls back to recreate for non-image changes; InPlaceOnly errors', () => {
    const t = template('nginx:1.0', { spec: { containers: [{ name: 'main', image: 'nginx:1.0', args: ['x'] }] } });
    assert.equal(planUpdate(setup(inPlace(), [O('cs-a')], t)).labelPatches.length, 1);
    const plan = planUpdate(setup({ updateStrategy: { rollingUpdate: { podUpdatePolicy: 'InPlaceOnly' } } }, [O('cs-a')], t));
    assert.equal(plan.error, 'find Pod cs-a update strategy is InPlaceOnly but can not update in-place');
  });

  it('paused and OnDelete update nothing', () => {
    assert.equal(planUpdate(setup(inPlace({ paused: true }), [O('cs-a')])).inPlaceUpdates.length, 0);
    assert.equal(planUpdate(setup({ updateStrategy: { type: 'OnDelete' } }, [O('cs-a')])).labelPatches.length, 0);
  });

  it('partition keeps pods at the old revision', () => {
    const plan = planUpdate(setup(inPlace({ partition: 2, maxUnavailable: 3 }), [O('cs-a'), O('cs-b'), O('cs-c')]));
    assert.equal(plan.inPlaceUpdates.length, 1);
  });

  it('an unavailable old pod is updated first; available ones then wait for maxUnavailable', () => {
    const plan = planUpdate(setup(inPlace(), [O('cs-a'), O('cs-b', { ready: false }), O('cs-c')]));
    assert.deepEqual(plan.inPlaceUpdates.map((u) => u.pod), ['cs-b']);
  });

  it('inPlaceUpdate hook sends the pod to PreparingUpdate first', () => {
    const hook = { labelsHandler: { hold: 'true' } };
    const plan = planUpdate(setup({ ...inPlace(), lifecycle: { inPlaceUpdate: hook } }, [O('cs-a', { labels: { hold: 'true' } })]));
    assert.deepEqual(plan.lifecycleTransitions.map((t) => [t.pod, t.to]), [['cs-a', 'PreparingUpdate']]);
    assert.equal(plan.inPlaceUpdates.length, 0);
  });

  it('refresh: an Updating pod whose image changed becomes Normal and update stops for this round', () => {
    const input = setup(inPlace(), []);
    const updating = pod('cs-a', { revision: input.updateRevision.metadata.name, state: 'Updating', image: 'nginx:2.0' });
    updating.metadata.annotations = {
      'apps.kruise.io/inplace-update-state': JSON.stringify({ revision: 'x', updateTimestamp: '2026-07-01T11:00:00Z', lastContainerStatuses: { main: { imageID: 'id-nginx:1.0' } } }),
    };
    const plan = planUpdate({ ...input, pods: [updating, O('cs-b')] });
    assert.deepEqual(plan.lifecycleTransitions.map((t) => [t.pod, t.from, t.to]), [['cs-a', 'Updating', 'Normal']]);
    assert.equal(plan.inPlaceUpdates.length, 0);
  });

  it('refresh: PreparingNormal becomes Normal once scheduled; back-fills pod-template-hash', () => {
    const p = O('cs-a', { state: 'PreparingNormal' });
    delete p.metadata.labels!['pod-template-hash'];
    const plan = planUpdate(setup(inPlace(), [p]));
    assert.deepEqual(plan.lifecycleTransitions.map((t) => t.to), ['Normal']);
    assert.deepEqual(plan.labelPatches, [{ pod: 'cs-a', labels: { 'pod-template-hash': OLD.slice(OLD.lastIndexOf('-') + 1) } }]);
  });
});

describe('update ordering', () => {
  const pods = [
    pod('p0', { labels: { w: 'low' } }),
    pod('p1', { labels: { w: 'high' } }),
    pod('p2', { labels: { w: 'high', zone: 'a' } }),
    pod('p3', {}),
  ];
  it('weightPriority: heavier first, ties by pod index descending', () => {
    const strategy: UpdatePriorityStrategy = { weightPriority: [{ weight: 50, matchSelector: { matchLabels: { w: 'high' } } }, { weight: 10, matchSelector: { matchLabels: { zone: 'a' } } }] };
    assert.deepEqual(sortByPriority(strategy, pods, [0, 1, 2, 3]), [2, 1, 3, 0]);
  });
  it('orderPriority: by key order, then larger trailing number first', () => {
    const ps = [pod('a', { labels: { v: 'x1' } }), pod('b', { labels: { v: 'x10' } }), pod('c', {})];
    assert.deepEqual(sortByPriority({ orderPriority: [{ orderedKey: 'v' }] }, ps, [0, 1, 2]), [2, 1, 0]);
  });
  it('scatterStrategy spreads matching pods', () => {
    const ps = ['a', 'a', 'a', 'b', 'b', 'b'].map((z, i) => pod(`p${i}`, { labels: { zone: z } }));
    assert.deepEqual(sortByScatter([{ key: 'zone', value: 'a' }], ps, [0, 1, 2, 3, 4, 5]), [0, 3, 4, 1, 5, 2]);
  });
  it('PreparingUpdate pods go first', () => {
    const ps = [pod('a'), pod('b', { state: 'PreparingUpdate' })];
    assert.deepEqual(sortUpdateIndexes(cloneSet(), ps, [0, 1]), [1, 0]);
  });
});
