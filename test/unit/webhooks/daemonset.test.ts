import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { fieldErrorString } from '../../../src/apis/field-errors.ts';
import { mutateDaemonSet, validateDaemonSet } from '../../../src/webhooks/daemonset/index.ts';
import { ctx, examples } from './helpers.ts';

const BETA = 'apps.kruise.io/v1beta1';
const ALPHA = 'apps.kruise.io/v1alpha1';
const RU = 'spec.updateStrategy.rollingUpdate';

function ds(spec: Record<string, any> = {}, apiVersion = BETA): any {
  return {
    apiVersion,
    kind: 'DaemonSet',
    metadata: { name: 'agent' },
    spec: {
      selector: { matchLabels: { app: 'agent' } },
      template: { metadata: { labels: { app: 'agent' } }, spec: { containers: [{ name: 'main', image: 'agent:1' }] } },
      ...spec,
    },
  };
}

function errors(obj: any): string[] {
  const c = ctx(obj.apiVersion);
  mutateDaemonSet(obj, c);
  return validateDaemonSet(obj, undefined, c).map(fieldErrorString);
}

describe('Advanced DaemonSet defaulting', () => {
  test('defaults and idempotence; template untouched', () => {
    const obj = ds();
    mutateDaemonSet(obj, ctx(BETA));
    assert.equal(obj.spec.burstReplicas, 250);
    assert.equal(obj.spec.revisionHistoryLimit, 10);
    assert.deepEqual(obj.spec.updateStrategy, {
      type: 'RollingUpdate',
      rollingUpdate: { rollingUpdateType: 'Standard', maxUnavailable: 1, maxSurge: 0 },
    });
    assert.equal(obj.spec.template.spec.restartPolicy, undefined);
    const again = structuredClone(obj);
    mutateDaemonSet(again, ctx(BETA));
    assert.deepEqual(again, obj);
  });
  test("the template is stored as Go's round trip (as v1.8.2's patch leaves it): canonical quantities, no empty lists", () => {
    const obj = ds({
      template: {
        metadata: { labels: { app: 'agent' } },
        spec: { containers: [{ name: 'main', image: 'agent:1', args: [], resources: { limits: { cpu: '0.5', memory: '1024Mi' } } }] },
      },
    });
    mutateDaemonSet(obj, ctx(BETA));
    assert.deepEqual(obj.spec.template, {
      metadata: { labels: { app: 'agent' }, creationTimestamp: null },
      spec: { containers: [{ name: 'main', image: 'agent:1', resources: { limits: { cpu: '500m', memory: '1Gi' } } }] },
    });
  });
  test('what Go could not decode is kept as sent (not turned into a zero value)', () => {
    const bad = ds({
      template: {
        metadata: { labels: { app: 'agent' } },
        spec: { containers: [{ name: 'main', image: 'agent:1', resources: { limits: { cpu: 'lots' } } }] },
      },
    });
    mutateDaemonSet(bad, ctx(BETA));
    assert.equal(bad.spec.template.spec.containers[0].resources.limits.cpu, 'lots');
  });
  test('maxSurge alone is kept', () => {
    const obj = ds({ updateStrategy: { rollingUpdate: { maxSurge: 1 } } });
    mutateDaemonSet(obj, ctx(BETA));
    assert.deepEqual(obj.spec.updateStrategy.rollingUpdate, { rollingUpdateType: 'Standard', maxSurge: 1 });
  });
});

describe('Advanced DaemonSet validation', () => {
  test('examples pass after defaulting', () => {
    for (const doc of examples('daemonset.yaml')) assert.deepEqual(errors(doc), [], doc.metadata.name);
  });
  const cases: Array<[string, any, string[]]> = [
    [
      'selector mismatch',
      ds({ selector: { matchLabels: { app: 'x' } } }),
      ['spec.template.metadata.labels: Invalid value: {"app":"agent"}: `selector` does not match template `labels`'],
    ],
    ['empty selector', ds({ selector: {} }), ['spec.selector: Invalid value: {}: empty selector is invalid for daemonset']],
    [
      'restartPolicy',
      (() => {
        const o = ds();
        o.spec.template.spec.restartPolicy = 'Never';
        return o;
      })(),
      ['spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"'],
    ],
    [
      'both surge and unavailable',
      ds({ updateStrategy: { rollingUpdate: { maxUnavailable: 1, maxSurge: 1 } } }),
      [`${RU}.maxSurge: Invalid value: 1: may not be set when maxUnavailable is non-zero`],
    ],
    [
      'neither',
      ds({ updateStrategy: { rollingUpdate: { maxUnavailable: 0, maxSurge: 0 } } }),
      [`${RU}.maxUnavailable: Required value: cannot be 0 when maxSurge is 0`],
    ],
    [
      'over 100%',
      ds({ updateStrategy: { rollingUpdate: { maxUnavailable: '150%' } } }),
      [`${RU}.maxUnavailable: Invalid value: "150%": must not be greater than 100%`],
    ],
    [
      'in-place with surge',
      ds({ updateStrategy: { rollingUpdate: { rollingUpdateType: 'InPlaceIfPossible', maxSurge: 1 } } }),
      [`${RU}.maxSurge: Required value: must be 0 for InPlaceIfPossible type`],
    ],
    [
      'bad type',
      ds({ updateStrategy: { type: 'Foo' } }),
      ['spec.updateStrategy: Unsupported value: {"type":"Foo"}: supported values: "RollingUpdate", "OnDelete"'],
    ],
    [
      'bad rollingUpdateType',
      ds({ updateStrategy: { rollingUpdate: { rollingUpdateType: 'Surging' } } }),
      [`${RU}.rollingUpdate.type: Unsupported value: "Surging": supported values: "Standard", "InPlaceIfPossible"`],
    ],
    [
      'v1alpha1 surging',
      ds({ updateStrategy: { rollingUpdate: { rollingUpdateType: 'Surging', maxUnavailable: 1 } } }, ALPHA),
      [`${RU}.maxUnavailable: Required value: must be 0 for Surging type`],
    ],
    [
      'v1alpha1 negative partition',
      ds({ updateStrategy: { rollingUpdate: { partition: -1 } } }, ALPHA),
      [`${RU}.rollingUpdate.partition: Invalid value: -1: must be greater than or equal to 0`],
    ],
    [
      'inPlaceUpdate hook',
      ds({ lifecycle: { inPlaceUpdate: { labelsHandler: { a: 'b' } } } }),
      ['spec.lifecycle.inPlaceUpdate: Forbidden: inPlaceUpdate hook has not supported yet'],
    ],
    [
      'negative minReadySeconds',
      ds({ minReadySeconds: -1 }),
      ['spec.minReadySeconds: Invalid value: -1: must be greater than or equal to 0'],
    ],
  ];
  for (const [name, obj, want] of cases) test(name, () => assert.deepEqual(errors(obj), want));
});
