import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { V1LabelSelector } from '@kubernetes/client-node';
import type { LabelSelector } from '../../../src/apis/core.ts';
import {
  Selector,
  SelectorError,
  fieldErrorString,
  formatLabelSelector,
  isLabelKey,
  isLabelValue,
  labelSelectorAsSelector,
  labelSelectorToString,
  matchesLabelSelector,
  newRequirement,
  parseSelector,
  parseToLabelSelector,
  selectorFromSet,
  validateLabelSelector,
  validateLabels,
  type LabelSelectorLike,
} from '../../../src/util/labelselector.ts';

// Expected texts below were produced by apimachinery v0.36.3 itself (labels.Parse,
// metav1.LabelSelectorAsSelector, validation.IsQualifiedName / IsValidLabelValue).
const KEY_NAME_ERR =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const VALUE_ERR =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
const PREFIX_ERR =
  "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const MULTI_SLASH_ERR =
  "a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')";
const LONG = 'a'.repeat(64);

function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof SelectorError, `expected SelectorError, got ${e}`);
    return e.message;
  }
  assert.fail('expected an error');
}

describe('LabelSelector → Selector', () => {
  it('null/undefined selects nothing, {} (and empty lists) select everything', () => {
    for (const ls of [null, undefined]) {
      const s = labelSelectorAsSelector(ls);
      assert.equal(s.selectsNothing(), true);
      assert.equal(s.matches({}), false);
      assert.equal(s.matches({ a: 'b' }), false);
      assert.equal(s.toString(), '');
    }
    for (const ls of [{}, { matchLabels: {}, matchExpressions: [] }, { matchLabels: null, matchExpressions: null }]) {
      const s = labelSelectorAsSelector(ls);
      assert.equal(s.isEverything(), true);
      assert.equal(s.matches({}), true);
      assert.equal(s.matches(undefined), true);
      assert.equal(s.matches({ a: 'b' }), true);
    }
  });

  const mix: LabelSelectorLike = {
    matchLabels: { app: 'web' },
    matchExpressions: [
      { key: 'tier', operator: 'In', values: ['fe', 'be'] },
      { key: 'env', operator: 'NotIn', values: ['prod'] },
      { key: 'has', operator: 'Exists' },
      { key: 'gone', operator: 'DoesNotExist' },
    ],
  };

  it('prints requirements sorted by key with sorted values', () => {
    assert.equal(labelSelectorToString(mix), 'app=web,env notin (prod),!gone,has,tier in (be,fe)');
    assert.equal(labelSelectorToString({ matchLabels: { z: '1', a: '2' } }), 'a=2,z=1');
    assert.equal(labelSelectorToString({}), '');
    assert.equal(labelSelectorToString(null), '');
  });

  const cases: Array<[string, Record<string, string> | undefined, boolean]> = [
    ['all satisfied', { app: 'web', tier: 'fe', has: '' }, true],
    ['In second value', { app: 'web', tier: 'be', has: 'x', env: 'dev' }, true],
    ['matchLabels value differs', { app: 'api', tier: 'fe', has: '' }, false],
    ['In value missing', { app: 'web', has: '' }, false],
    ['In value not listed', { app: 'web', tier: 'db', has: '' }, false],
    ['NotIn value listed', { app: 'web', tier: 'fe', has: '', env: 'prod' }, false],
    ['Exists missing', { app: 'web', tier: 'fe' }, false],
    ['DoesNotExist present', { app: 'web', tier: 'fe', has: '', gone: '' }, false],
    ['no labels', undefined, false],
  ];
  for (const [name, labels, want] of cases) {
    it(`matches: ${name}`, () => {
      assert.equal(matchesLabelSelector(mix, labels), want);
    });
  }

  it('an invalid selector throws at every match, a missing one matches nothing', () => {
    const invalid = { matchExpressions: [{ key: 'a', operator: 'Foo' }] };
    for (let i = 0; i < 2; i++) assert.throws(() => matchesLabelSelector(invalid, { a: 'b' }), /not a valid label selector operator/);
    assert.equal(matchesLabelSelector(undefined, { a: 'b' }), false);
    assert.equal(matchesLabelSelector(null, { a: 'b' }), false);
    assert.equal(matchesLabelSelector({}, { a: 'b' }), true);
  });

  it('does not see inherited object properties as labels', () => {
    assert.equal(matchesLabelSelector({ matchExpressions: [{ key: 'constructor', operator: 'Exists' }] }, {}), false);
    assert.equal(matchesLabelSelector({ matchExpressions: [{ key: 'toString', operator: 'DoesNotExist' }] }, {}), true);
  });

  it('rejects invalid selectors with apimachinery messages', () => {
    assert.equal(
      errorOf(() => labelSelectorAsSelector({ matchExpressions: [{ key: 'a', operator: 'Foo' }] })),
      '"Foo" is not a valid label selector operator',
    );
    assert.equal(
      errorOf(() => labelSelectorAsSelector({ matchLabels: { '-a': 'b' } })),
      `key: Invalid value: "-a": ${KEY_NAME_ERR}`,
    );
    assert.equal(
      errorOf(() => labelSelectorAsSelector({ matchLabels: { a: 'b c' } })),
      `values[0][a]: Invalid value: "b c": ${VALUE_ERR}`,
    );
    assert.equal(
      errorOf(() => labelSelectorAsSelector({ matchExpressions: [{ key: 'a', operator: 'In' }] })),
      "values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty",
    );
    assert.equal(
      errorOf(() => labelSelectorAsSelector({ matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] })),
      'values: Invalid value: ["x"]: values set must be empty for exists and does not exist',
    );
  });

  it('aggregates several problems of one requirement like utilerrors', () => {
    assert.equal(
      errorOf(() => newRequirement('-k', '=', ['a', 'b'])),
      `[key: Invalid value: "-k": ${KEY_NAME_ERR}, values: Invalid value: ["a","b"]: exact-match compatibility requires one single value]`,
    );
  });

  it('formatLabelSelector prints <none> and <error> for humans', () => {
    assert.equal(formatLabelSelector({}), '<none>');
    assert.equal(formatLabelSelector(null), '<none>');
    assert.equal(formatLabelSelector({ matchExpressions: [{ key: 'a', operator: 'Foo' }] }), '<error>');
    assert.equal(formatLabelSelector({ matchLabels: { a: 'b' } }), 'a=b');
  });

  it('accepts the src/apis type and client-node objects', () => {
    const fromApis: LabelSelector = { matchLabels: { a: 'b' }, matchExpressions: [{ key: 'c', operator: 'Exists' }] };
    const fromClient: V1LabelSelector = { matchExpressions: [{ key: 'c', operator: 'In', values: ['d'] }] };
    assert.equal(labelSelectorToString(fromApis), 'a=b,c');
    assert.equal(labelSelectorToString(fromClient), 'c in (d)');
  });
});

describe('string selector grammar', () => {
  // [input, canonical String() output]
  const valid: Array<[string, string]> = [
    ['', ''],
    ['a=b', 'a=b'],
    ['a==b', 'a==b'],
    ['a!=b', 'a!=b'],
    ['a=', 'a='],
    ['k', 'k'],
    ['!k', '!k'],
    [' a = b , c ', 'a=b,c'],
    ['b=1,a=2', 'a=2,b=1'],
    ['k in (c,b,a,b)', 'k in (a,b,c)'],
    ['k notin (v)', 'k notin (v)'],
    ['x in (foo,,baz),y,z notin ()', 'x in (,baz,foo),y,z notin ()'],
    ['k in ()', 'k in ()'],
    ['k in (,)', 'k in ()'],
    ['a in (in,notin)', 'a in (in,notin)'],
    ['in=notin', 'in=notin'],
    ['example.com/x=y', 'example.com/x=y'],
    ['x>1', 'x>1'],
  ];
  for (const [input, want] of valid) {
    it(`parses ${JSON.stringify(input)}`, () => {
      assert.equal(parseSelector(input).toString(), want);
      // The canonical form parses back to itself.
      assert.equal(parseSelector(want).toString(), want);
    });
  }

  const invalid: Array<[string, string]> = [
    ['!k=v', "found '=', expected: ',' or 'end of string'"],
    [',a', "found ',', expected: !, identifier, or 'end of string'"],
    ['a=b,', "found '', expected: identifier after ','"],
    ['a=b c', "found 'c', expected: ',' or 'end of string'"],
    ['a=b=c', "found '=', expected: ',' or 'end of string'"],
    ['a b', "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"],
    ['a in b', "unable to parse requirement: found 'b' expected: '('"],
    ['a in (b', "unable to parse requirement: found '', expected: ',' or ')'"],
    ['a=(b)', "unable to parse requirement: found '(', expected: identifier"],
    ['-bad=x', `unable to parse requirement: <nil>: Invalid value: "-bad": ${KEY_NAME_ERR}`],
    ['a=-bad', `unable to parse requirement: values[0][a]: Invalid value: "-bad": ${VALUE_ERR}`],
    ['Example.com/x=y', `unable to parse requirement: <nil>: Invalid value: "Example.com/x": ${PREFIX_ERR}`],
    ['a/b/c', `unable to parse requirement: <nil>: Invalid value: "a/b/c": ${MULTI_SLASH_ERR}`],
    ['x<y', `unable to parse requirement: values[0]: Invalid value: "y": for 'Gt', 'Lt' operators, the value must be an integer`],
  ];
  for (const [input, want] of invalid) {
    it(`rejects ${JSON.stringify(input)}`, () => {
      assert.equal(
        errorOf(() => parseSelector(input)),
        want,
      );
    });
  }

  const matching: Array<[string, Record<string, string>, boolean]> = [
    ['a=b', { a: 'b' }, true],
    ['a=b', { a: 'c' }, false],
    ['a=b', {}, false],
    ['a!=b', {}, true],
    ['a!=b', { a: 'c' }, true],
    ['a!=b', { a: 'b' }, false],
    ['a=', { a: '' }, true],
    ['k', { k: '' }, true],
    ['!k', { k: '' }, false],
    ['k notin (v)', {}, true],
    ['k in (a,b)', { k: 'b' }, true],
    ['x>1', { x: '2' }, true],
    ['x>1', { x: '1' }, false],
    ['x>1', { x: 'two' }, false],
    ['x<10', { x: '-5' }, true],
    ['a=b,c', { a: 'b' }, false],
  ];
  for (const [input, labels, want] of matching) {
    it(`${JSON.stringify(input)} ${want ? 'matches' : 'does not match'} ${JSON.stringify(labels)}`, () => {
      assert.equal(parseSelector(input).matches(labels), want);
    });
  }

  it('parseToLabelSelector turns the grammar back into the API type', () => {
    assert.deepEqual(parseToLabelSelector('app=web,tier in (fe,be),!gone,has,env notin (prod)'), {
      matchLabels: { app: 'web' },
      matchExpressions: [
        { key: 'env', operator: 'NotIn', values: ['prod'] },
        { key: 'gone', operator: 'DoesNotExist', values: [] },
        { key: 'has', operator: 'Exists', values: [] },
        { key: 'tier', operator: 'In', values: ['be', 'fe'] },
      ],
    });
    assert.equal(
      errorOf(() => parseToLabelSelector('a!=b')),
      '"!=" is not a valid label selector operator',
    );
    assert.equal(
      errorOf(() => parseToLabelSelector('x>1')),
      `"gt" isn't supported in label selectors`,
    );
    assert.equal(
      errorOf(() => parseToLabelSelector('a b')),
      `couldn't parse the selector string "a b": unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt`,
    );
  });
});

describe('Selector helpers', () => {
  it('selectorFromSet matches exactly the set; empty set selects everything', () => {
    const s = selectorFromSet({ b: '2', a: '1' });
    assert.equal(s.toString(), 'a=1,b=2');
    assert.equal(s.matches({ a: '1', b: '2', c: '3' }), true);
    assert.equal(s.matches({ a: '1' }), false);
    assert.equal(selectorFromSet({}).isEverything(), true);
    assert.equal(selectorFromSet(undefined).matches({ x: 'y' }), true);
  });

  it('add keeps key order; nothing stays nothing', () => {
    const s = parseSelector('b=1').add(newRequirement('a', 'exists', []));
    assert.equal(s.toString(), 'a,b=1');
    assert.equal(
      Selector.nothing()
        .add(newRequirement('a', 'exists', []))
        .selectsNothing(),
      true,
    );
  });

  it('requiresExactMatch reports the one demanded value', () => {
    const s = parseSelector('a=1,b in (x),c in (x,y),d!=z');
    assert.equal(s.requiresExactMatch('a'), '1');
    assert.equal(s.requiresExactMatch('b'), 'x');
    assert.equal(s.requiresExactMatch('c'), undefined);
    assert.equal(s.requiresExactMatch('d'), undefined);
    assert.equal(s.requiresExactMatch('e'), undefined);
  });
});

describe('label key and value validation', () => {
  const keys: Array<[string, string[]]> = [
    ['app', []],
    ['example.com/app', []],
    ['App_1.x', []],
    ['/app', ['prefix part must be non-empty']],
    ['example.com/', ['name part must be non-empty', KEY_NAME_ERR]],
    ['', ['name part must be non-empty', KEY_NAME_ERR]],
    ['a/b/c', [MULTI_SLASH_ERR]],
    ['-app', [KEY_NAME_ERR]],
    [LONG, ['name part must be no more than 63 bytes']],
    ['EXAMPLE.com/x', [PREFIX_ERR]],
    ['a..b/c', [PREFIX_ERR]],
    [`${'a'.repeat(254)}/x`, ['prefix part must be no more than 253 bytes']],
  ];
  for (const [key, want] of keys) {
    it(`key ${JSON.stringify(key.length > 40 ? `${key.slice(0, 10)}…(${key.length})` : key)}`, () => {
      assert.deepEqual(isLabelKey(key), want);
    });
  }

  const values: Array<[string, string[]]> = [
    ['', []],
    ['v', []],
    ['A_b.c-D', []],
    ['a'.repeat(63), []],
    ['-v', [VALUE_ERR]],
    ['a b', [VALUE_ERR]],
    [LONG, ['must be no more than 63 bytes']],
  ];
  for (const [value, want] of values) {
    it(`value ${JSON.stringify(value.length > 40 ? `${value.slice(0, 10)}…(${value.length})` : value)}`, () => {
      assert.deepEqual(isLabelValue(value), want);
    });
  }

  it('validateLabelSelector reports field errors in Kubernetes form', () => {
    const errs = validateLabelSelector(
      {
        matchLabels: { ok: 'fine', 'b@d': 'x' },
        matchExpressions: [
          { key: 'a', operator: 'In', values: [] },
          { key: 'b', operator: 'Exists', values: ['x'] },
          { key: 'c', operator: 'Gt', values: ['1'] },
          { key: 'd', operator: 'In', values: ['-x'] },
        ],
      },
      'spec.selector',
    ).map(fieldErrorString);
    assert.deepEqual(errs, [
      `spec.selector.matchLabels: Invalid value: "b@d": ${KEY_NAME_ERR}`,
      "spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
      "spec.selector.matchExpressions[1].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
      'spec.selector.matchExpressions[2].operator: Invalid value: "Gt": not a valid selector operator',
      `spec.selector.matchExpressions[3].values[0]: Invalid value: "-x": ${VALUE_ERR}`,
    ]);
    assert.deepEqual(validateLabelSelector(null, 'spec.selector'), []);
    assert.deepEqual(validateLabelSelector({ matchLabels: { a: 'b' } }, 'spec.selector'), []);
  });

  it('validateLabels checks keys and values', () => {
    assert.deepEqual(validateLabels({ a: 'b' }, 'metadata.labels'), []);
    assert.deepEqual(validateLabels({ a: 'b c' }, 'metadata.labels').map(fieldErrorString), [
      `metadata.labels: Invalid value: "b c": ${VALUE_ERR}`,
    ]);
  });
});
