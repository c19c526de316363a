import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AdmissionDenied } from '../../../src/runtime/webhook/types.ts';
import { registrations, validatePodUnavailableBudget } from '../../../src/webhooks/podunavailablebudget/index.ts';
import { admission, fakeReader, loadExamples, msg } from './nonworkload-helpers.ts';

const V = 'policy.kruise.io/v1beta1';

function pub(spec: Record<string, any>, name = 'pub', annotations?: Record<string, string>): any {
  return { apiVersion: V, kind: 'PodUnavailableBudget', metadata: { name, namespace: 'default', annotations }, spec };
}

const selectorPub = (extra: Record<string, any> = {}) =>
  pub({ selector: { matchLabels: { app: 'web' } }, maxUnavailable: '25%', ...extra });

async function errors(obj: any, old?: any, others: any[] = []): Promise<string> {
  const ctx = admission(V, old ? 'UPDATE' : 'CREATE', { reader: fakeReader(others) });
  return msg(await validatePodUnavailableBudget(obj, old, ctx));
}

describe('PodUnavailableBudget validation', () => {
  test('upstream examples pass', async () => {
    for (const doc of loadExamples('podunavailablebudget.yaml')) assert.equal(await errors(doc), '', doc.metadata.name);
  });

  const cases: Array<[string, any, string]> = [
    [
      'neither selector nor targetRef',
      pub({ maxUnavailable: 1 }),
      'spec.selector, targetRef: Required value: no selector or targetRef defined in PodUnavailableBudget',
    ],
    [
      'both selector and targetRef',
      selectorPub({ targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' } }),
      'spec.selector, targetRef: Required value: selector and targetRef are mutually exclusive',
    ],
    [
      'incomplete targetRef',
      pub({ targetRef: { apiVersion: 'apps/v1', kind: 'Deployment' }, maxUnavailable: 1 }),
      'spec.TargetReference: Invalid value: {"apiVersion":"apps/v1","kind":"Deployment"}: empty TargetReference is not valid for PodUnavailableBudget.',
    ],
    [
      'empty selector',
      pub({ selector: {}, maxUnavailable: 1 }),
      'spec.selector: Invalid value: {}: empty selector is not valid for PodUnavailableBudget.',
    ],
    [
      'no budget',
      pub({ selector: { matchLabels: { app: 'web' } } }),
      'spec.maxUnavailable, minAvailable: Required value: no maxUnavailable or minAvailable defined in PodUnavailableBudget',
    ],
    [
      'both budgets',
      selectorPub({ minAvailable: 1 }),
      'spec.maxUnavailable, minAvailable: Required value: maxUnavailable and minAvailable are mutually exclusive',
    ],
    [
      'negative maxUnavailable',
      selectorPub({ maxUnavailable: -1 }),
      'spec.maxUnavailable: Invalid value: -1: must be greater than or equal to 0',
    ],
    [
      'minAvailable over 100%',
      selectorPub({ maxUnavailable: undefined, minAvailable: '120%' }),
      'spec.minAvailable: Invalid value: "120%": must not be greater than 100%',
    ],
    [
      'bad percent',
      selectorPub({ maxUnavailable: '1.5%' }),
      `spec.maxUnavailable: Invalid value: "1.5%": a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')`,
    ],
    [
      'bad protect-operations annotation',
      pub({ selector: { matchLabels: { app: 'web' } }, maxUnavailable: 1 }, 'pub', { 'kruise.io/pub-protect-operations': 'DELETE,KILL' }),
      'metadata: Internal error: annotation[kruise.io/pub-protect-operations] is invalid',
    ],
    [
      'bad protect-total-replicas annotation',
      pub({ selector: { matchLabels: { app: 'web' } }, maxUnavailable: 1 }, 'pub', { 'pub.kruise.io/protect-total-replicas': 'ten' }),
      'metadata: Internal error: annotation[pub.kruise.io/protect-total-replicas] is invalid',
    ],
  ];
  for (const [name, obj, expected] of cases) test(name, async () => assert.equal(await errors(obj), expected));

  test('selector and targetRef are immutable', async () => {
    const old = selectorPub();
    assert.equal(await errors(selectorPub({ maxUnavailable: 2 }), old), '');
    const changed = selectorPub();
    changed.spec.selector.matchLabels.app = 'api';
    assert.equal(await errors(changed, old), 'spec.selector, targetRef: Required value: selector and targetRef cannot be modified');
  });

  test('conflicts with other budgets of the namespace', async () => {
    const other = { ...selectorPub(), metadata: { name: 'other', namespace: 'default' } };
    assert.equal(
      await errors(selectorPub({ selector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['web', 'api'] }] } }), undefined, [
        other,
      ]),
      'spec.selector: Invalid value: {"matchExpressions":[{"key":"app","operator":"In","values":["web","api"]}]}: pub.spec.selector is in conflict with other PodUnavailableBudget other',
    );
    assert.equal(await errors(selectorPub({ selector: { matchLabels: { app: 'api' } } }), undefined, [other]), '');
    const ref = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' };
    const otherRef = { ...pub({ targetRef: { ...ref, apiVersion: 'apps/v1beta1' }, maxUnavailable: 1 }, 'other') };
    assert.equal(
      await errors(pub({ targetRef: ref, maxUnavailable: 1 }), undefined, [otherRef]),
      'spec.targetReference: Invalid value: {"apiVersion":"apps/v1","kind":"Deployment","name":"web"}: pub.spec.targetReference is in conflict with other PodUnavailableBudget other',
    );
  });

  test('both PUB gates off rejects every budget', async () => {
    const ctx = admission(V, 'CREATE', { gates: { PodUnavailableBudgetDeleteGate: false, PodUnavailableBudgetUpdateGate: false } });
    await assert.rejects(
      async () => validatePodUnavailableBudget(selectorPub(), undefined, ctx),
      (e: unknown) =>
        e instanceof AdmissionDenied &&
        e.message ===
          'feature PodUnavailableBudget is invalid, please open via feature-gate(PodUnavailableBudgetDeleteGate, PodUnavailableBudgetUpdateGate)',
    );
  });

  test('registration', () => {
    assert.deepEqual(
      registrations.map((r) => [r.group, r.resource, r.versions, r.operations]),
      [['policy.kruise.io', 'podunavailablebudgets', ['v1alpha1', 'v1beta1'], ['CREATE', 'UPDATE']]],
    );
  });
});
