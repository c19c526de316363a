import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { registrations, validateWorkloadSpread } from '../../../src/webhooks/workloadspread/index.ts';
import { admission, fakeReader, loadExamples, msg } from './nonworkload-helpers.ts';

const V = 'apps.kruise.io/v1beta1';

function ws(spec: Record<string, any>, name = 'ws'): any {
  return {
    apiVersion: V,
    kind: 'WorkloadSpread',
    metadata: { name, namespace: 'default' },
    spec: {
      targetRef: { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'cs' },
      subsets: [{ name: 'a', maxReplicas: 3 }, { name: 'b' }],
      ...spec,
    },
  };
}

async function errors(obj: any, opts: { old?: any; objects?: any[] } = {}): Promise<string> {
  const ctx = admission(obj.apiVersion, opts.old ? 'UPDATE' : 'CREATE', { reader: fakeReader(opts.objects ?? []) });
  return msg(await validateWorkloadSpread(obj, opts.old, ctx));
}

const whitelist = {
  kind: 'ConfigMap',
  metadata: { name: 'kruise-configuration', namespace: 'kruise-system' },
  data: {
    WorkloadSpread_Watch_Custom_Workload_WhiteList: JSON.stringify({
      workloads: [{ Group: 'kubeflow.org', Kind: 'TFJob', replicasPath: 'spec.replicas' }],
    }),
  },
};

describe('WorkloadSpread validation', () => {
  test('targetFilter: its selector must be valid (upstream e2e "job-like custom workload")', async () => {
    const filter = (expr: Record<string, unknown>) => ws({ targetFilter: { selector: { matchExpressions: [expr] } } });
    assert.match(await errors(filter({ key: 'key', operator: 'In' })), /spec\.targetFilter: Invalid value: .*values/);
    assert.match(
      await errors(filter({ key: 'key', operator: 'Bad' })),
      /spec\.targetFilter: Invalid value: .*not a valid label selector operator/,
    );
    assert.equal(await errors(filter({ key: 'key', operator: 'In', values: ['a'] })), '');
    assert.equal(
      await errors(ws({ targetFilter: { selector: { matchLabels: { role: 'worker' } }, replicasPathList: ['spec.replicas'] } })),
      '',
    );
  });

  test('upstream examples pass (the TFJob one with its whitelist)', async () => {
    for (const doc of loadExamples('workloadspread.yaml')) assert.equal(await errors(doc, { objects: [whitelist] }), '', doc.metadata.name);
  });

  const cases: Array<[string, any, string]> = [
    ['missing targetRef', ws({ targetRef: undefined }), 'spec.targetRef: Required value: no targetRef defined in WorkloadSpread'],
    [
      'incomplete targetRef',
      ws({ targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: '' } }),
      'spec.targetRef: Invalid value: {"apiVersion":"apps/v1","kind":"Deployment","name":""}: empty TargetReference is not valid for WorkloadSpread.',
    ],
    [
      'wrong group',
      ws({ targetRef: { apiVersion: 'apps/v1', kind: 'CloneSet', name: 'cs' } }),
      'spec.targetRef: Invalid value: {"apiVersion":"apps/v1","kind":"CloneSet","name":"cs"}: TargetReference is not valid for CloneSet.',
    ],
    [
      'unknown kind',
      ws({ targetRef: { apiVersion: 'x.io/v1', kind: 'Foo', name: 'f' } }),
      `spec.targetRef: Invalid value: {"apiVersion":"x.io/v1","kind":"Foo","name":"f"}: TargetReference's GroupKind is not permitted.`,
    ],
    ['no subsets', ws({ subsets: [] }), 'spec.subsets: Required value: subsets number must >= 1 in WorkloadSpread'],
    [
      'duplicate subset',
      ws({ subsets: [{ name: 'a' }, { name: 'a' }] }),
      'spec.subsets[1].name: Invalid value: "a": duplicated subset name a',
    ],
    [
      'mixed maxReplicas types',
      ws({
        subsets: [
          { name: 'a', maxReplicas: 1 },
          { name: 'b', maxReplicas: '50%' },
        ],
      }),
      'spec.subsets[1].maxReplicas: Invalid value: "50%": the maxReplicas type of all subsets must be the same',
    ],
    [
      'negative maxReplicas',
      ws({ subsets: [{ name: 'a', maxReplicas: -1 }] }),
      'spec.subsets[0].maxReplicas: Invalid value: -1: maxReplicas is not valid for subset',
    ],
    [
      'percent over 100',
      ws({
        subsets: [
          { name: 'a', maxReplicas: '60%' },
          { name: 'b', maxReplicas: '50%' },
        ],
      }),
      `spec.subsets[1].maxReplicas: Invalid value: "50%": the sum of all subset's maxReplicas exceeds 100% is no permitted`,
    ],
    [
      'percent under 100 with all set',
      ws({
        subsets: [
          { name: 'a', maxReplicas: '40%' },
          { name: 'b', maxReplicas: '50%' },
        ],
      }),
      'spec.subsets[0].maxReplicas: Invalid value: "40%": maxReplicas sum of all subsets must equal 100% when type is specified as percent',
    ],
    [
      'StatefulSet needs int',
      ws({ targetRef: { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 's' }, subsets: [{ name: 'a', maxReplicas: '50%' }] }),
      'spec.subsets[0].maxReplicas: Invalid value: "50%": the maxReplicas type must be Int for StatefulSet',
    ],
    [
      'bad schedule type',
      ws({ scheduleStrategy: { type: 'Random' } }),
      `spec.scheduleStrategy.type: Invalid value: "Random": ScheduleStrategy's type is not valid`,
    ],
    [
      'adaptive without Adaptive type',
      ws({ scheduleStrategy: { adaptive: { rescheduleCriticalSeconds: 10 } } }),
      "spec.scheduleStrategy.type: Invalid value: 10: the scheduleStrategy's type must be adaptive when using adaptive scheduleStrategy",
    ],
    [
      'adaptive with capped last subset',
      ws({
        subsets: [
          { name: 'a', maxReplicas: 1 },
          { name: 'b', maxReplicas: 1 },
        ],
        scheduleStrategy: { type: 'Adaptive', adaptive: {} },
      }),
      'spec.scheduleStrategy.adaptive: Invalid value: null: the last subset must be not specified when using adaptive scheduleStrategy',
    ],
    [
      'rescheduleCriticalSeconds too large',
      ws({
        subsets: [{ name: 'a', maxReplicas: 1 }, { name: 'b', maxReplicas: 1 }, { name: 'c' }],
        scheduleStrategy: { type: 'Adaptive', adaptive: { rescheduleCriticalSeconds: 148 } },
      }),
      'spec.scheduleStrategy.adaptive.rescheduleCriticalSeconds: Invalid value: 148: rescheduleCriticalSeconds < 0 or rescheduleCriticalSeconds > 147 is not permitted',
    ],
    [
      'bad toleration',
      ws({ subsets: [{ name: 'a', tolerations: [{ operator: 'Equal', value: 'x' }] }] }),
      'spec.subsets[0].tolerations[0].operator: Invalid value: "Equal": operator must be Exists when `key` is empty, which means "match all values and all keys"',
    ],
  ];
  for (const [name, obj, expected] of cases) test(name, async () => assert.equal(await errors(obj), expected));

  test('v1alpha1 field names appear in paths', async () => {
    const obj = ws({ subsets: [{ name: 'a', requiredNodeSelectorTerm: { matchExpressions: [{ key: 'zone', operator: 'Near' }] } }] });
    obj.apiVersion = 'apps.kruise.io/v1alpha1';
    assert.equal(
      await errors(obj),
      'spec.subsets[0].requiredNodeSelectorTerm.matchExpressions[0].operator: Unsupported value: "Near": supported values: "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"',
    );
  });

  test('one WorkloadSpread per workload', async () => {
    const other = ws({}, 'other');
    other.spec.targetRef.apiVersion = 'apps.kruise.io/v1beta1';
    assert.equal(
      await errors(ws({}), { objects: [other] }),
      'spec.targetRef: Invalid value: {"apiVersion":"apps.kruise.io/v1alpha1","kind":"CloneSet","name":"cs"}: ws.spec.targetRef is in conflict with other WorkloadSpread other',
    );
  });

  test('targetRef is immutable (version changes are fine)', async () => {
    const old = ws({});
    const sameGroup = ws({ targetRef: { apiVersion: 'apps.kruise.io/v1beta1', kind: 'CloneSet', name: 'cs' } });
    assert.equal(await errors(sameGroup, { old }), '');
    assert.equal(
      await errors(ws({ targetRef: { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'cs2' } }), { old }),
      'spec.targetRef: Invalid value: {"apiVersion":"apps.kruise.io/v1alpha1","kind":"CloneSet","name":"cs2"}: change TargetReference is not permitted for WorkloadSpread',
    );
  });

  test('registration gated on WorkloadSpread', () => {
    assert.deepEqual(
      registrations.map((r) => [r.resource, r.versions, r.gate]),
      [['workloadspreads', ['v1alpha1', 'v1beta1'], 'WorkloadSpread']],
    );
  });
});
