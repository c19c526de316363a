// Cron schedules as robfig/cron v3 ParseStandard + SpecSchedule.Next compute them (cases after
// robfig's spec_test), in IANA zones from the platform's Intl, DST included.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { formatInZone, parseStandardCron } from '../../../src/util/cron.ts';

const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString().replace('.000Z', 'Z'));
const nextAfter = (spec: string, from: string) => iso(parseStandardCron(spec).next(Date.parse(from)));

describe('next activation', () => {
  const cases: Array<[string, string, string | undefined]> = [
    ['*/1 * * * *', '2026-01-01T00:00:30.500Z', '2026-01-01T00:01:00Z'],
    ['*/15 * * * *', '2026-01-01T00:15:00Z', '2026-01-01T00:30:00Z'],
    ['0 10 * * ?', '2026-01-01T10:00:00Z', '2026-01-02T10:00:00Z'],
    ['5-10/2 1 * * *', '2026-01-01T01:06:00Z', '2026-01-01T01:07:00Z'],
    ['0 0 1,15 * *', '2026-01-02T00:00:00Z', '2026-01-15T00:00:00Z'],
    ['0 0 * jan,jul *', '2026-02-01T00:00:00Z', '2026-07-01T00:00:00Z'],
    // Day-of-month and day-of-week both restricted: either matches.
    ['0 0 13 * 5', '2026-01-01T00:00:00Z', '2026-01-02T00:00:00Z'],
    ['0 0 13 * 5', '2026-01-09T00:00:00Z', '2026-01-13T00:00:00Z'],
    // One of them `*`: both must match.
    ['0 0 * * mon', '2026-01-01T00:00:00Z', '2026-01-05T00:00:00Z'],
    ['0 0 29 2 *', '2026-01-01T00:00:00Z', '2028-02-29T00:00:00Z'],
    ['0 0 30 2 *', '2026-01-01T00:00:00Z', undefined],
    ['@hourly', '2026-01-01T00:59:59Z', '2026-01-01T01:00:00Z'],
    ['@weekly', '2026-01-01T00:00:00Z', '2026-01-04T00:00:00Z'],
    ['@yearly', '2026-01-01T00:00:00Z', '2027-01-01T00:00:00Z'],
    ['@every 1m30s', '2026-01-01T00:00:00.700Z', '2026-01-01T00:01:30Z'],
    ['TZ=Asia/Shanghai 0 10 * * ?', '2022-09-05T09:01:00Z', '2022-09-06T02:00:00Z'],
    ['CRON_TZ=Asia/Kolkata 30 0 * * *', '2026-01-01T00:00:00Z', '2026-01-01T19:00:00Z'],
    // New York springs forward on 2026-03-08: 02:30 does not exist that day.
    ['TZ=America/New_York 30 2 * * *', '2026-03-07T12:00:00Z', '2026-03-09T06:30:00Z'],
    // ...and falls back on 2026-11-01: 01:30 happens once in the schedule (the first, EDT).
    ['TZ=America/New_York 30 1 * * *', '2026-10-31T12:00:00Z', '2026-11-01T05:30:00Z'],
    ['TZ=America/New_York 0 0 * * *', '2026-03-07T12:00:00Z', '2026-03-08T05:00:00Z'],
  ];
  for (const [spec, from, want] of cases) {
    test(`${spec} after ${from} → ${want ?? 'none within five years'}`, () => assert.equal(nextAfter(spec, from), want));
  }
});

describe('parse errors (robfig messages)', () => {
  const cases: Array<[string, RegExp]> = [
    ['', /empty spec string/],
    ['* * * *', /expected exactly 5 fields, found 4/],
    ['*/0 * * * *', /step of range should be a positive number/],
    ['5-1 * * * *', /beginning of range \(5\) beyond end of range \(1\)/],
    ['TZ=Mars/Base * * * * *', /provided bad location Mars\/Base/],
    ['@fortnightly', /unrecognized descriptor/],
    ['@every 1x', /^Error: failed to parse duration @every 1x: time: invalid duration "1x"$/],
  ];
  for (const [spec, want] of cases) test(JSON.stringify(spec), () => assert.throws(() => parseStandardCron(spec), want));
});

test('formatInZone writes RFC 3339 with the zone offset, Z for UTC', () => {
  const t = Date.parse('2022-09-06T02:00:00Z');
  assert.equal(formatInZone(t, 'Asia/Shanghai'), '2022-09-06T10:00:00+08:00');
  assert.equal(formatInZone(t, 'UTC'), '2022-09-06T02:00:00Z');
  assert.equal(formatInZone(t, 'America/St_Johns'), '2022-09-05T23:30:00-02:30');
});
