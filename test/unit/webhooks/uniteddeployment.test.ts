import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { fieldErrorString } from '../../../src/apis/field-errors.ts';
import { mutateUnitedDeployment, validateUnitedDeployment } from '../../../src/webhooks/uniteddeployment/index.ts';
import { ctx, examples } from './helpers.ts';

const V = 'apps.kruise.io/v1beta1';
const SUBSETS = 'spec.topology.subsets';
function ud(spec: Record<string, any> = {}, subsets: any[] = [{ name: 'a' }, { name: 'b' }]): any {
  return {
    apiVersion: V,
    kind: 'UnitedDeployment',
    metadata: { name: 'ud' },
    spec: {
      replicas: 4,
      selector: { matchLabels: { app: 'x' } },
      template: {
        cloneSetTemplate: {
          metadata: { labels: { app: 'x' } },
          spec: {
            selector: { matchLabels: { app: 'x' } },
            template: { metadata: { labels: { app: 'x' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
          },
        },
      },
      topology: { subsets },
      ...spec,
    },
  };
}
function errors(obj: any, op: 'CREATE' | 'UPDATE' = 'CREATE', old?: any): string[] {
  const c = ctx(V, op);
  mutateUnitedDeployment(obj, c);
  if (old) mutateUnitedDeployment(old, c);
  return validateUnitedDeployment(obj, old, c).map(fieldErrorString);
}

describe('UnitedDeployment defaulting', () => {
  test('defaults and idempotence', () => {
    const obj = ud({}, [{ name: 'a', maxReplicas: 2 }, { name: 'b' }]);
    mutateUnitedDeployment(obj, ctx(V));
    assert.equal(obj.spec.revisionHistoryLimit, 10);
    assert.deepEqual(obj.spec.updateStrategy, { type: 'Manual', manualUpdate: {} });
    assert.deepEqual(obj.spec.topology.subsets, [
      { name: 'a', maxReplicas: 2, minReplicas: 0 },
      { name: 'b', minReplicas: 0 },
    ]);
    const again = structuredClone(obj);
    mutateUnitedDeployment(again, ctx(V));
    assert.deepEqual(again, obj);
  });
});

describe('UnitedDeployment validation', () => {
  test('examples pass after defaulting', () => {
    for (const doc of examples('uniteddeployment.yaml')) assert.deepEqual(errors(doc), [], doc.metadata.name);
  });
  const cases: Array<[string, any, string[]]> = [
    [
      'no template',
      ud({ template: {} }),
      [
        'spec.template: Required value: should provide one of statefulSetTemplate, advancedStatefulSetTemplate, cloneSetTemplate, or deploymentTemplate',
      ],
    ],
    ['duplicate subset', ud({}, [{ name: 'a' }, { name: 'a' }]), [`${SUBSETS}[1].name: Invalid value: "a": duplicated subset name a`]],
    [
      'bad subset name',
      ud({}, [{ name: 'A' }]),
      [
        `${SUBSETS}[0].name: Invalid value: "A": invalid subset name a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
      ],
    ],
    [
      'sum too large',
      ud({}, [
        { name: 'a', replicas: 3 },
        { name: 'b', replicas: 2 },
      ]),
      [
        `${SUBSETS}: Invalid value: 5: sum of indicated subset replicas 5 should not be greater than UnitedDeployment replicas 4`,
        `${SUBSETS}: Invalid value: 5: if replicas of all subsets are provided, the sum of indicated subset replicas 5 should equal UnitedDeployment replicas 4`,
      ],
    ],
    [
      'replicas nil needs all subsets',
      ud({ replicas: undefined }, [{ name: 'a', replicas: 1 }, { name: 'b' }]),
      [`${SUBSETS}: Invalid value: 1: if UnitedDeployment replicas is not provided, replicas of all subsets should be provided`],
    ],
    [
      'mutually exclusive',
      ud({}, [
        { name: 'a', replicas: 1 },
        { name: 'b', maxReplicas: 2 },
      ]),
      [
        `${SUBSETS}: Invalid value: [{"name":"a","replicas":1},{"name":"b","maxReplicas":2}]: subset.Replicas and subset.MinReplicas/subset.MaxReplicas are mutually exclusive in a UnitedDeployment`,
      ],
    ],
    [
      'one maxReplicas must be empty',
      ud({}, [
        { name: 'a', maxReplicas: 2 },
        { name: 'b', maxReplicas: 2 },
      ]),
      [`${SUBSETS}: Invalid value: 2: at least one subset.maxReplicas must be empty`],
    ],
    [
      'min > max',
      ud({}, [{ name: 'a', minReplicas: 3, maxReplicas: 2 }, { name: 'b' }]),
      [`${SUBSETS}[0].minReplicas: Invalid value: 2: subset[0].minReplicas must be more than or equal to maxReplicas`],
    ],
    [
      'adaptive forbids replicas',
      ud({ topology: { subsets: [{ name: 'a', replicas: 1 }, { name: 'b' }], scheduleStrategy: { type: 'Adaptive' } } }),
      [`${SUBSETS}[0].replicas: Invalid value: 1: specify replicas use minReplicas/maxReplicas to enable adaptive strategy`],
    ],
    [
      'unknown partition subset',
      ud({ updateStrategy: { manualUpdate: { partitions: { zz: 1 } } } }),
      ['spec.updateStrategy.partitions: Invalid value: {"zz":1}: subset zz does not exist'],
    ],
    [
      'template label mismatch',
      (() => {
        const o = ud();
        o.spec.template.cloneSetTemplate.metadata.labels.app = 'y';
        return o;
      })(),
      ['spec.template.cloneSetTemplate.metadata.labels: Invalid value: {"app":"y"}: `selector` does not match template `labels`'],
    ],
    [
      'bad node selector term',
      ud({}, [{ name: 'a', nodeSelectorTerm: { matchExpressions: [{ key: 'k', operator: 'In' }] } }, { name: 'b' }]),
      [`${SUBSETS}[0].nodeSelectorTerm.matchExpressions[0].values: Required value: must be specified when \`operator\` is 'In' or 'NotIn'`],
    ],
  ];
  for (const [name, obj, want] of cases) test(name, () => assert.deepEqual(errors(obj), want));

  test('update: selector, nodeSelectorTerm and tolerations of existing subsets are immutable', () => {
    const term = (v: string) => ({ matchExpressions: [{ key: 'zone', operator: 'In', values: [v] }] });
    const old = ud({}, [{ name: 'a', nodeSelectorTerm: term('1') }, { name: 'b' }]);
    assert.deepEqual(
      errors(
        ud({ replicas: 6 }, [{ name: 'a', nodeSelectorTerm: term('1') }, { name: 'b' }, { name: 'c' }]),
        'UPDATE',
        structuredClone(old),
      ),
      [],
    );
    const obj = ud({}, [
      { name: 'a', nodeSelectorTerm: term('2') },
      { name: 'b', tolerations: [{ key: 'k', operator: 'Exists' }] },
    ]);
    obj.spec.selector.matchLabels.extra = 'z';
    const out = errors(obj, 'UPDATE', structuredClone(old));
    assert.ok(out.includes('spec.selector: Invalid value: {"matchLabels":{"app":"x","extra":"z"}}: field is immutable'), out.join('\n'));
    assert.ok(out.includes(`${SUBSETS}[0].nodeSelectorTerm: Forbidden: may not be changed in an update`));
    assert.ok(out.includes(`${SUBSETS}[1].tolerations: Forbidden: may not be changed in an update`));
  });
});
