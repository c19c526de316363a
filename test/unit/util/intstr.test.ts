import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  calculatePartitionReplicas,
  getKruiseScaledValueFromIntOrPercent,
  getScaledValueFromIntOrPercent,
  isValidIntOrPercent,
  type IntOrString,
} from '../../../src/util/intstr.ts';

function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    return (e as Error).message;
  }
  assert.fail('expected an error');
}

describe('getScaledValueFromIntOrPercent (Kubernetes: integer percent only)', () => {
  // [value, total, roundUp, expected]
  const ok: Array<[IntOrString, number, boolean, number]> = [
    [5, 10, true, 5],
    [5, 0, false, 5],
    [0, 10, true, 0],
    ['50%', 10, true, 5],
    ['25%', 10, true, 3],
    ['25%', 10, false, 2],
    ['20%', 3, true, 1],
    ['20%', 3, false, 0],
    ['100%', 7, false, 7],
    ['0%', 7, true, 0],
    ['150%', 10, true, 15],
    ['+5%', 10, true, 1],
    ['-10%', 10, true, -1],
    ['-5%', 10, true, 0],
  ];
  for (const [v, total, roundUp, want] of ok) {
    it(`${JSON.stringify(v)} of ${total} (${roundUp ? 'up' : 'down'}) = ${want}`, () => {
      assert.equal(getScaledValueFromIntOrPercent(v, total, roundUp), want);
    });
  }

  // Messages as apimachinery v0.36.3 produces them.
  const bad: Array<[IntOrString | null, string]> = [
    ['90', 'invalid value for IntOrString: invalid type: string is not a percentage'],
    ['1.5%', 'invalid value for IntOrString: invalid value "1.5%": strconv.Atoi: parsing "1.5": invalid syntax'],
    ['%', 'invalid value for IntOrString: invalid value "%": strconv.Atoi: parsing "": invalid syntax'],
    ['abc%', 'invalid value for IntOrString: invalid value "abc%": strconv.Atoi: parsing "abc": invalid syntax'],
    [' 5%', 'invalid value for IntOrString: invalid value " 5%": strconv.Atoi: parsing " 5": invalid syntax'],
    [
      '99999999999999999999%',
      'invalid value for IntOrString: invalid value "99999999999999999999%": strconv.Atoi: parsing "99999999999999999999": value out of range',
    ],
    [null, 'nil value for IntOrString'],
    [1.5, 'invalid value for IntOrString: invalid type: neither int nor percentage'],
  ];
  for (const [v, want] of bad) {
    it(`rejects ${JSON.stringify(v)}`, () => {
      assert.equal(
        errorOf(() => getScaledValueFromIntOrPercent(v, 10, true)),
        want,
      );
    });
  }
});

describe('getKruiseScaledValueFromIntOrPercent (float percent)', () => {
  const ok: Array<[IntOrString, number, boolean, number]> = [
    [3, 10, true, 3],
    ['99.99%', 10000, false, 9999],
    ['0.01%', 10, true, 1],
    ['0.01%', 10, false, 0],
    ['1.5%', 100, true, 2],
    ['1.5%', 100, false, 1],
    ['50%', 5, true, 3],
    ['.5%', 200, true, 1],
    ['1e1%', 10, true, 1],
  ];
  for (const [v, total, roundUp, want] of ok) {
    it(`${JSON.stringify(v)} of ${total} (${roundUp ? 'up' : 'down'}) = ${want}`, () => {
      assert.equal(getKruiseScaledValueFromIntOrPercent(v, total, roundUp), want);
    });
  }

  const bad: Array<[IntOrString, string]> = [
    ['90', 'invalid value for IntOrString: invalid type: string is not a percentage'],
    ['90#', 'invalid value for IntOrString: invalid type: string is not a percentage'],
    ['#%', 'invalid value for IntOrString: invalid value "#%": strconv.ParseFloat: parsing "#": invalid syntax'],
    ['NaN%', 'invalid value for IntOrString: invalid value "NaN%": strconv.ParseFloat: parsing "NaN": invalid syntax'],
    ['1e999%', 'invalid value for IntOrString: invalid value "1e999%": strconv.ParseFloat: parsing "1e999": value out of range'],
  ];
  for (const [v, want] of bad) {
    it(`rejects ${JSON.stringify(v)}`, () => {
      assert.equal(
        errorOf(() => getKruiseScaledValueFromIntOrPercent(v, 10, true)),
        want,
      );
    });
  }
});

describe('calculatePartitionReplicas', () => {
  // [partition, replicas, expected old-revision pods]
  const cases: Array<[IntOrString | undefined, number | undefined, number, string]> = [
    [undefined, 8, 0, 'no partition updates everything'],
    ['90%', 8, 7, '90% of 8 rounds up to 8, so one pod is still updated'],
    ['100%', 8, 8, '100% keeps every pod'],
    ['50%', 1, 1, 'a single replica is kept by any positive percent'],
    ['50%', undefined, 1, 'unset replicas count as 1'],
    ['1%', 10, 1, 'round up keeps at least one old pod'],
    ['0%', 10, 0, '0% updates all'],
    ['99.99%', 10000, 9999, 'float percent'],
    ['99%', 3, 2, 'issue #926: 99% of 3 still updates one pod'],
    ['0.01%', 10, 1, 'tiny float percent rounds up'],
    [8, 8, 8, 'int equal to replicas is not reduced'],
    [10, 8, 8, 'int above replicas is clamped'],
    [-2, 8, 0, 'negative int is clamped to 0'],
    ['-5%', 8, 0, 'negative percent is clamped to 0'],
    ['200%', 8, 8, 'over 100% scales past replicas, so it is only clamped'],
    ['50%', 0, 0, 'zero replicas'],
    [3, 0, 0, 'zero replicas clamps ints'],
  ];
  for (const [partition, replicas, want, why] of cases) {
    it(`${JSON.stringify(partition)} of ${replicas} = ${want} (${why})`, () => {
      assert.equal(calculatePartitionReplicas(partition, replicas), want);
    });
  }

  it('throws on an unparsable partition', () => {
    assert.equal(
      errorOf(() => calculatePartitionReplicas('90', 8)),
      'invalid value for IntOrString: invalid type: string is not a percentage',
    );
  });

  it('treats null like unset', () => {
    assert.equal(calculatePartitionReplicas(null, 5), 0);
    assert.equal(calculatePartitionReplicas('50%', null), 1);
  });
});

describe('isValidIntOrPercent', () => {
  const cases: Array<[IntOrString | null | undefined, boolean, boolean]> = [
    // [value, kruise, kubernetes]
    [0, true, true],
    [3, true, true],
    ['20%', true, true],
    ['99.9%', true, false],
    ['5', false, false],
    ['x%', false, false],
    [1.5, false, false],
    [null, false, false],
    [undefined, false, false],
  ];
  for (const [v, kruise, kubernetes] of cases) {
    it(`${JSON.stringify(v)}: kruise ${kruise}, kubernetes ${kubernetes}`, () => {
      assert.equal(isValidIntOrPercent(v), kruise);
      assert.equal(isValidIntOrPercent(v, 'kruise'), kruise);
      assert.equal(isValidIntOrPercent(v, 'kubernetes'), kubernetes);
    });
  }
});
