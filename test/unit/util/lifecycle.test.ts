import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  addNotReadyKey,
  applyLifecycleTransition,
  isPodAllHooked,
  isPodHooked,
  planLifecycleTransition,
  removeNotReadyKey,
  type LifecyclePodFacts,
} from '../../../src/util/lifecycle.ts';

const NOW = '2026-07-01T12:00:00Z';

function pod(labels: Record<string, string> = {}, finalizers: string[] = [], gate = true): LifecyclePodFacts {
  return {
    metadata: { name: 'p', labels, finalizers },
    spec: { readinessGates: gate ? [{ conditionType: 'KruisePodReady' }] : [] },
    status: { conditions: [{ type: 'KruisePodReady', status: 'True' }] },
  };
}

describe('isPodHooked / isPodAllHooked', () => {
  const hook = { labelsHandler: { a: '1', b: '2' }, finalizersHandler: ['f'] };
  const cases: Array<[string, LifecyclePodFacts, boolean, boolean]> = [
    ['nothing', pod(), false, false],
    ['one label', pod({ a: '1' }), true, false],
    ['wrong value', pod({ a: '2' }), false, false],
    ['finalizer only', pod({}, ['f']), true, false],
    ['everything', pod({ a: '1', b: '2' }, ['f']), true, true],
  ];
  for (const [name, p, hooked, all] of cases) {
    it(name, () => {
      assert.equal(isPodHooked(hook, p), hooked);
      assert.equal(isPodAllHooked(hook, p), all);
    });
  }
  it('undefined hook is never hooked; empty hook is all-hooked', () => {
    assert.equal(isPodHooked(undefined, pod()), false);
    assert.equal(isPodAllHooked(undefined, pod()), false);
    assert.equal(isPodAllHooked({}, pod()), true);
  });
});

describe('planLifecycleTransition', () => {
  it('sets state and timestamp', () => {
    const t = planLifecycleTransition(pod({ 'lifecycle.apps.kruise.io/state': 'Normal' }), 'PreparingDelete', { now: NOW })!;
    assert.deepEqual(t.labels, { 'lifecycle.apps.kruise.io/state': 'PreparingDelete' });
    assert.deepEqual(t.annotations, { 'lifecycle.apps.kruise.io/timestamp': NOW });
    assert.equal(t.readinessCondition, undefined);
  });
  it('no-op when already in the state', () => {
    assert.equal(planLifecycleTransition(pod({ 'lifecycle.apps.kruise.io/state': 'Normal' }), 'Normal', { now: NOW }), undefined);
  });
  it('markPodNotReady holds KruisePodReady False on PreparingDelete / PreparingUpdate and releases on Updated', () => {
    const t = planLifecycleTransition(pod(), 'PreparingUpdate', { now: NOW, markPodNotReady: true })!;
    assert.deepEqual(t.readinessCondition, {
      type: 'KruisePodReady',
      status: 'False',
      message: '[{"userAgent":"Lifecycle","key":"preUpdateHook"}]',
      lastTransitionTime: NOW,
    });
    const held = applyLifecycleTransition(pod(), t);
    assert.equal(held.metadata!.labels!['lifecycle.apps.kruise.io/state'], 'PreparingUpdate');
    const back = planLifecycleTransition(held, 'Updated', { now: NOW, markPodNotReady: true })!;
    assert.equal(back.readinessCondition!.status, 'True');
    assert.equal(back.readinessCondition!.message, '[]');
  });
  it('readiness is held even when the state is already set', () => {
    const t = planLifecycleTransition(pod({ 'lifecycle.apps.kruise.io/state': 'PreparingDelete' }), 'PreparingDelete', {
      now: NOW,
      markPodNotReady: true,
    })!;
    assert.equal(t.stateChanged, false);
    assert.equal(t.readinessCondition!.status, 'False');
  });
  it('without the readiness gate nothing is held', () => {
    assert.equal(addNotReadyKey(pod({}, [], false), { userAgent: 'Lifecycle', key: 'preDeleteHook' }, NOW), undefined);
  });
  it('handler re-arms hook labels and finalizers', () => {
    const t = planLifecycleTransition(pod({ 'lifecycle.apps.kruise.io/state': 'Updated' }), 'PreparingUpdate', {
      now: NOW,
      handler: { labelsHandler: { hold: 'true' }, finalizersHandler: ['x/y'] },
    })!;
    assert.deepEqual(t.labels, { hold: 'true', 'lifecycle.apps.kruise.io/state': 'PreparingUpdate' });
    assert.deepEqual(t.addFinalizers, ['x/y']);
    assert.deepEqual(applyLifecycleTransition(pod(), t).metadata!.finalizers, ['x/y']);
  });
  it('two keys: removing one keeps the condition False', () => {
    let p = pod();
    p = { ...p, status: { conditions: [addNotReadyKey(p, { userAgent: 'A', key: 'k' }, NOW)!] } };
    p = { ...p, status: { conditions: [addNotReadyKey(p, { userAgent: 'Lifecycle', key: 'preDeleteHook' }, NOW)!] } };
    const c = removeNotReadyKey(p, { userAgent: 'A', key: 'k' }, NOW)!;
    assert.equal(c.status, 'False');
    assert.equal(c.message, '[{"userAgent":"Lifecycle","key":"preDeleteHook"}]');
  });
});
