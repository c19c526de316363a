import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { applyMergePatch, createMergePatch } from '../../../src/util/merge-patch.ts';

describe('createMergePatch', () => {
  const cases: Array<[string, unknown, unknown, unknown]> = [
    ['equal objects: nothing', { a: 1, b: { c: [1] } }, { a: 1, b: { c: [1] } }, undefined],
    ['a changed scalar', { a: 1, b: 2 }, { a: 3, b: 2 }, { a: 3 }],
    ['a removed key is null', { a: 1, b: 2 }, { a: 1 }, { b: null }],
    ['an added key with its value', { a: 1 }, { a: 1, b: { c: 1 } }, { b: { c: 1 } }],
    [
      'nested objects key by key; an untouched empty object is left out',
      { s: { x: [1, 2], e: {} } },
      { s: { x: [2], e: {} } },
      { s: { x: [2] } },
    ],
    ['an array whole', { a: [1, 2, 3] }, { a: [1, 3] }, { a: [1, 3] }],
    ['an object turned scalar', { a: { b: 1 } }, { a: 'x' }, { a: 'x' }],
    ['a key emptied to {}', { a: { b: 1 } }, { a: {} }, { a: { b: null } }],
  ];
  for (const [name, from, to, want] of cases) {
    test(name, () => {
      const patch = createMergePatch(from, to);
      assert.deepEqual(patch, want);
      assert.deepEqual(applyMergePatch(from, patch ?? {}), to, 'applied to the first, the patch gives the second');
    });
  }
});
