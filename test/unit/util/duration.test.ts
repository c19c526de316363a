import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseDuration, formatDuration } from '../../../src/util/duration.ts';

test('parseDuration reads Go durations', () => {
  const cases: Array<[string, number]> = [
    ['0', 0],
    ['5m', 300_000],
    ['2m0s', 120_000],
    ['10h', 36_000_000],
    ['1h30m', 5_400_000],
    ['1.5s', 1500],
    ['250ms', 250],
    ['-1s', -1000],
    ['.5s', 500],
    ['1000us', 1],
    ['1000\u00b5s', 1],
    ['2000\u03bcs', 2],
    ['1m1.5s', 61_500],
  ];
  for (const [input, want] of cases) assert.equal(parseDuration(input), want, input);
});

test('parseDuration rejects what Go rejects', () => {
  for (const bad of ['', '5', 'm', '1x', '1h 30m', '--1s', 'abc']) {
    assert.throws(() => parseDuration(bad), /time: invalid duration/, bad);
  }
});

test('formatDuration prints like Go Duration.String', () => {
  const cases: Array<[number, string]> = [
    [0, '0s'],
    [300_000, '5m0s'],
    [3_600_000, '1h0m0s'],
    [1500, '1.5s'],
    [250, '250ms'],
    [5_400_000, '1h30m0s'],
    [-2000, '-2s'],
  ];
  for (const [ms, want] of cases) assert.equal(formatDuration(ms), want);
});
