import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { fieldErrorString } from '../../../src/apis/field-errors.ts';
import { AdmissionDenied } from '../../../src/runtime/webhook/types.ts';
import { mutateStatefulSet, validateStatefulSet } from '../../../src/webhooks/statefulset/index.ts';
import { ctx, examples } from './helpers.ts';

const BETA = 'apps.kruise.io/v1beta1';
const ALPHA = 'apps.kruise.io/v1alpha1';

function sts(spec: Record<string, any> = {}, apiVersion = BETA): any {
  return {
    apiVersion,
    kind: 'StatefulSet',
    metadata: { name: 'web', namespace: 'default' },
    spec: {
      replicas: 3,
      serviceName: 'web',
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'main', image: 'nginx:1.25' }] } },
      ...spec,
    },
  };
}

async function errors(obj: any, op: 'CREATE' | 'UPDATE' = 'CREATE', old?: any, gates = {}, reader?: any): Promise<string[]> {
  const c = ctx(obj.apiVersion, op, gates);
  c.reader = reader;
  mutateStatefulSet(obj, c);
  if (old) mutateStatefulSet(old, c);
  return (await validateStatefulSet(obj, old, c)).map(fieldErrorString);
}

describe('Advanced StatefulSet defaulting', () => {
  test('v1beta1 defaults and idempotence', () => {
    const obj = sts({ replicas: undefined });
    mutateStatefulSet(obj, ctx(BETA));
    assert.equal(obj.spec.podManagementPolicy, 'OrderedReady');
    assert.deepEqual(obj.spec.updateStrategy, {
      type: 'RollingUpdate',
      rollingUpdate: { partition: 0, maxUnavailable: 1, podUpdatePolicy: 'ReCreate', minReadySeconds: 0 },
    });
    assert.deepEqual(obj.spec.persistentVolumeClaimRetentionPolicy, { whenDeleted: 'Retain', whenScaled: 'Retain' });
    assert.equal(obj.spec.volumeClaimUpdateStrategy, undefined, 'gate StatefulSetAutoResizePVCGate off');
    assert.equal(obj.spec.replicas, 1);
    assert.equal(obj.spec.revisionHistoryLimit, 10);
    assert.equal(obj.spec.template.spec.restartPolicy, 'Always');
    const again = structuredClone(obj);
    mutateStatefulSet(again, ctx(BETA));
    assert.deepEqual(again, obj);
  });

  test('gates: resize strategy, no retention policy, TemplateNoDefaults', () => {
    const obj = sts();
    mutateStatefulSet(
      obj,
      ctx(BETA, 'CREATE', { StatefulSetAutoResizePVCGate: true, StatefulSetAutoDeletePVC: false, TemplateNoDefaults: true }),
    );
    assert.deepEqual(obj.spec.volumeClaimUpdateStrategy, { type: 'OnDelete' });
    assert.equal(obj.spec.persistentVolumeClaimRetentionPolicy, undefined);
    assert.equal(obj.spec.template.spec.restartPolicy, undefined);
  });

  test('v1alpha1 gets no beta-only fields; OnDelete gets no rollingUpdate', () => {
    const obj = sts({ updateStrategy: { type: 'OnDelete' } }, ALPHA);
    mutateStatefulSet(obj, ctx(ALPHA));
    assert.equal(obj.spec.persistentVolumeClaimRetentionPolicy, undefined);
    assert.deepEqual(obj.spec.updateStrategy, { type: 'OnDelete' });
  });
});

describe('Advanced StatefulSet validation', () => {
  test('examples pass after defaulting', async () => {
    for (const doc of examples('advanced-statefulset.yaml')) assert.deepEqual(await errors(doc), [], doc.metadata.name);
  });

  const RU = 'spec.updateStrategy.rollingUpdate';
  const ru = (r: Record<string, any>, extra: Record<string, any> = {}) => sts({ updateStrategy: { rollingUpdate: r }, ...extra });
  const cases: Array<[string, any, string[]]> = [
    [
      'bad podManagementPolicy',
      sts({ podManagementPolicy: 'Foo' }),
      [`spec.podManagementPolicy: Invalid value: "Foo": must be 'OrderedReady' or 'Parallel'`],
    ],
    [
      'bad update type',
      sts({ updateStrategy: { type: 'Foo' } }),
      [`spec.updateStrategy: Invalid value: {"type":"Foo"}: must be 'RollingUpdate' or 'OnDelete'`],
    ],
    [
      'OnDelete with rollingUpdate',
      sts({ updateStrategy: { type: 'OnDelete', rollingUpdate: { partition: 1 } } }),
      [`${RU}: Invalid value: {"partition":1}: only allowed for updateStrategy 'RollingUpdate'`],
    ],
    ['negative partition', ru({ partition: -1 }), [`${RU}.partition: Invalid value: -1: must be greater than or equal to 0`]],
    [
      'minReadySeconds > 300',
      ru({ minReadySeconds: 301 }),
      [`${RU}.minReadySeconds: Invalid value: 301: must be no more than 300 seconds`],
    ],
    [
      'maxUnavailable needs Parallel',
      ru({ maxUnavailable: 2 }),
      [`${RU}.maxUnavailable: Invalid value: 2: can only work with Parallel PodManagementPolicyType`],
    ],
    [
      'maxUnavailable 0',
      ru({ maxUnavailable: 0 }, { podManagementPolicy: 'Parallel' }),
      [`${RU}.maxUnavailable: Invalid value: 0: should not be less than 1`],
    ],
    [
      'maxUnavailable bad percent',
      ru({ maxUnavailable: '1.5%' }, { podManagementPolicy: 'Parallel' }),
      [
        `${RU}.maxUnavailable: Invalid value: "1.5%": a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')`,
        `${RU}.maxUnavailable: Invalid value: "1.5%": getValueFromIntOrPercent error: invalid value for IntOrString: invalid value "1.5%": strconv.Atoi: parsing "1.5": invalid syntax`,
      ],
    ],
    [
      'bad podUpdatePolicy',
      ru({ podUpdatePolicy: 'Foo' }),
      [`${RU}.podUpdatePolicy: Invalid value: "Foo": must be 'ReCreate', InPlaceIfPossible or 'InPlaceOnly'`],
    ],
    [
      'in-place needs readiness gate',
      ru({ podUpdatePolicy: 'InPlaceIfPossible' }),
      ['spec.template.spec.readinessGates: Invalid value: []: must contains InPlaceUpdateReady when podUpdatePolicy is InPlaceIfPossible'],
    ],
    [
      'unorderedUpdate needs Parallel',
      ru({ unorderedUpdate: { priorityStrategy: { orderPriority: [{ orderedKey: '' }] } } }),
      [
        `${RU}.unorderedUpdate: Required value: unorderedUpdate can only work with Parallel PodManagementPolicyType`,
        `${RU}.unorderedUpdate.priorityStrategy: Required value: order key can not be empty`,
      ],
    ],
    [
      'reserveOrdinals',
      sts({ reserveOrdinals: ['1-x', -2] }),
      [
        'spec: Invalid value: ["1-x",-2]: 0 th reserve ordinal is not a valid range: 1-x',
        'spec: Invalid value: ["1-x",-2]: 1 th reserve ordinal is negative: -2',
      ],
    ],
    [
      'scaleStrategy.maxUnavailable',
      sts({ scaleStrategy: { maxUnavailable: '10%' } }),
      ['spec.scaleStrategy.maxUnavailable: Invalid value: "10%": can only work with Parallel PodManagementPolicyType'],
    ],
    [
      'retention policy',
      sts({ persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Keep' } }),
      ['spec.persistentVolumeClaimRetentionPolicy.whenDeleted: Unsupported value: "Keep": supported values: "Retain", "Delete"'],
    ],
    ['negative replicas', sts({ replicas: -1 }), ['spec.replicas: Invalid value: -1: must be greater than or equal to 0']],
    ['empty selector', sts({ selector: {} }), ['spec.selector: Invalid value: {}: empty selector is invalid for statefulset']],
    [
      'selector mismatch',
      sts({ selector: { matchLabels: { app: 'x' } } }),
      ['spec.template.metadata.labels: Invalid value: {"app":"web"}: `selector` does not match template `labels`'],
    ],
    [
      'restartPolicy',
      (() => {
        const o = sts();
        o.spec.template.spec.restartPolicy = 'OnFailure';
        return o;
      })(),
      ['spec.template.spec.restartPolicy: Unsupported value: "OnFailure": supported values: "Always"'],
    ],
    [
      'activeDeadlineSeconds',
      (() => {
        const o = sts();
        o.spec.template.spec.activeDeadlineSeconds = 5;
        return o;
      })(),
      ['spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in StatefulSet is not Supported'],
    ],
  ];
  for (const [name, obj, want] of cases) test(name, async () => assert.deepEqual(await errors(obj), want));

  test('without defaulting, required fields are reported', async () => {
    const obj = sts({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: {} } });
    assert.deepEqual((await validateStatefulSet(obj, undefined, ctx(BETA))).map(fieldErrorString), [
      'spec.podManagementPolicy: Required value',
      `${RU}.maxUnavailable: Required value`,
      `${RU}.podUpdatePolicy: Required value`,
    ]);
  });
});

describe('Advanced StatefulSet update rules', () => {
  const FORBIDDEN =
    "spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'reserveOrdinals', 'lifecycle', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy', `volumeClaimTemplates`, `VolumeClaimUpdateStrategy` and 'updateStrategy' are forbidden";

  test('serviceName, selector and podManagementPolicy are immutable', async () => {
    assert.deepEqual(await errors(sts({ serviceName: 'other' }), 'UPDATE', sts()), [FORBIDDEN]);
    assert.deepEqual(await errors(sts({ podManagementPolicy: 'Parallel' }), 'UPDATE', sts()), [FORBIDDEN]);
  });

  test('mutable fields may change', async () => {
    const obj = sts({
      replicas: 9,
      reserveOrdinals: [1],
      ordinals: { start: 2 },
      volumeClaimTemplates: [{ metadata: { name: 'd' }, spec: {} }],
    });
    obj.spec.template.spec.containers[0].image = 'nginx:2';
    assert.deepEqual(await errors(obj, 'UPDATE', sts()), []);
  });

  test('InPlaceOnly allows only image changes', async () => {
    const base = () => ru2();
    const ru2 = () => {
      const o = sts({ podManagementPolicy: 'Parallel', updateStrategy: { rollingUpdate: { podUpdatePolicy: 'InPlaceOnly' } } });
      o.spec.template.spec.readinessGates = [{ conditionType: 'InPlaceUpdateReady' }];
      return o;
    };
    const ok = base();
    ok.spec.template.spec.containers[0].image = 'nginx:2';
    assert.deepEqual(await errors(ok, 'UPDATE', base()), []);
    const bad = base();
    bad.spec.template.spec.containers[0].args = ['x'];
    await assert.rejects(
      async () => errors(bad, 'UPDATE', base()),
      (e: unknown) =>
        e instanceof AdmissionDenied &&
        e.message ===
          'invalid template modified with InPlaceOnly strategy: add /containers/0/args, currently only image update is allowed for InPlaceOnly',
    );
  });

  test('OnPodRollingUpdate volumeClaimTemplates', async () => {
    const gates = { StatefulSetAutoResizePVCGate: true };
    const vct = (name: string, storage: string, sc?: string) => ({
      metadata: { name },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } }, ...(sc ? { storageClassName: sc } : {}) },
    });
    const mk = (vcts: any[]) => sts({ volumeClaimTemplates: vcts, volumeClaimUpdateStrategy: { type: 'OnPodRollingUpdate' } });
    assert.deepEqual(await errors(mk([vct('a', '1Gi'), vct('b', '1Gi')]), 'UPDATE', mk([vct('a', '1Gi')]), gates), [
      'spec.volumeClaimTemplates: Invalid value: [{"metadata":{"name":"a"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}},"status":{"phase":"Pending"}},{"metadata":{"name":"b"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}},"status":{"phase":"Pending"}}]: volumeClaimTemplate can not be added or deleted when OnRollingUpdate',
    ]);
    assert.deepEqual(await errors(mk([vct('b', '1Gi')]), 'UPDATE', mk([vct('a', '1Gi')]), gates), [
      'spec.volumeClaimTemplates[b].name: Forbidden: volumeClaimTemplate name can not be modified',
    ]);
    const reader = {
      get: async (_v: string, _k: string, name: string) => ({ metadata: { name }, allowVolumeExpansion: name !== 'fixed' }),
      list: async () => [],
    };
    assert.deepEqual(await errors(mk([vct('a', '2Gi', 'fast')]), 'UPDATE', mk([vct('a', '1Gi', 'fast')]), gates, reader), []);
    assert.deepEqual(await errors(mk([vct('a', '2Gi', 'fixed')]), 'UPDATE', mk([vct('a', '1Gi', 'fixed')]), gates, reader), [
      'spec.volumeClaimTemplates[a].spec.resources.requests.storage: Forbidden: storage class fixed does not support volume expansion',
    ]);
    // Storage compares by exact value: the same size in other units is no resize (even on a class
    // that cannot expand).
    assert.deepEqual(await errors(mk([vct('a', '1024Mi', 'fixed')]), 'UPDATE', mk([vct('a', '1Gi', 'fixed')]), gates, reader), []);
    assert.deepEqual(await errors(mk([vct('a', '1073741824', 'fixed')]), 'UPDATE', mk([vct('a', '1Gi', 'fixed')]), gates, reader), []);
    assert.deepEqual(await errors(mk([vct('a', '1.5Gi', 'fast')]), 'UPDATE', mk([vct('a', '1536Mi', 'fast')]), gates, reader), []);
    // A smaller size is a resize too, as upstream's (a rollback of an expansion, e2e "partition 2,
    // rollback image and pvc size"): allowed where the class allows expansion.
    assert.deepEqual(await errors(mk([vct('a', '1Gi', 'fast')]), 'UPDATE', mk([vct('a', '2Gi', 'fast')]), gates, reader), []);
    assert.deepEqual(await errors(mk([vct('a', '1Gi', 'fixed')]), 'UPDATE', mk([vct('a', '2Gi', 'fixed')]), gates, reader), [
      'spec.volumeClaimTemplates[a].spec.resources.requests.storage: Forbidden: storage class fixed does not support volume expansion',
    ]);
    // Only the storage class and the access modes must stay; other template fields may change.
    const changedMode = mk([{ ...vct('a', '1Gi'), spec: { ...vct('a', '1Gi').spec, accessModes: ['ReadWriteMany'] } }]);
    const out = await errors(changedMode, 'UPDATE', mk([vct('a', '1Gi')]), gates);
    assert.equal(out.length, 1);
    assert.match(
      out[0]!,
      /^spec\.volumeClaimTemplates\[a\]: Invalid value: .*: volumeClaimTemplate can not be modified when OnRollingUpdate$/,
    );
    const otherClass = await errors(mk([vct('a', '1Gi', 'fixed')]), 'UPDATE', mk([vct('a', '1Gi', 'fast')]), gates, reader);
    assert.equal(otherClass.length, 1);
    assert.match(otherClass[0]!, /volumeClaimTemplate can not be modified when OnRollingUpdate$/);
    assert.deepEqual(await errors(mk([vct('a', '1Gi', 'fast')]), 'UPDATE', mk([vct('a', '1Gi')]), gates, reader), []);
    const labelled = mk([{ ...vct('a', '1Gi'), metadata: { name: 'a', labels: { tier: 'db' } } }]);
    assert.deepEqual(await errors(labelled, 'UPDATE', mk([vct('a', '1Gi')]), gates), []);
  });

  test('deletion protection', async () => {
    const obj = sts();
    obj.metadata.labels = { 'policy.kruise.io/delete-protection': 'Cascading' };
    await assert.rejects(
      async () => validateStatefulSet(obj, obj, ctx(BETA, 'DELETE', { ResourcesDeletionProtection: true })),
      /replicas 3>0$/,
    );
  });
});
