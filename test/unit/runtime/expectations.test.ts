import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../../src/util/clock.ts';
import { pino } from 'pino';
import {
  ResourceVersionExpectations,
  ScaleExpectations,
  UpdateExpectations,
  expectationGate,
  isResourceVersionNewer,
} from '../../../src/runtime/expectations.ts';

const minute = 60_000;

interface Pod {
  metadata: { namespace: string; name: string; uid?: string; resourceVersion?: string; labels?: Record<string, string> };
}

function pod(name: string, revision?: string): Pod {
  return { metadata: { namespace: 'ns', name, labels: revision ? { 'controller-revision-hash': revision } : {} } };
}

const atRevision = (p: Pod, revision: string) => p.metadata.labels?.['controller-revision-hash'] === revision;

describe('ScaleExpectations', () => {
  it('is satisfied with no expectations', () => {
    const e = new ScaleExpectations({ clock: new FakeClock() });
    assert.deepEqual(e.satisfiedExpectations('ns/cs'), {
      satisfied: true,
      unsatisfiedDuration: 0,
      timedOut: false,
      dirty: { create: [], delete: [] },
    });
  });

  it('is unsatisfied until every expected create and delete is observed', async () => {
    const clock = new FakeClock();
    const e = new ScaleExpectations({ clock });
    e.expectScale('ns/cs', 'create', 'p1');
    e.expectScale('ns/cs', 'create', 'p2');
    e.expectScale('ns/cs', 'delete', 'p0');

    let s = e.satisfiedExpectations('ns/cs');
    assert.equal(s.satisfied, false);
    assert.equal(s.unsatisfiedDuration, 0);
    assert.deepEqual(s.dirty, { create: ['p1', 'p2'], delete: ['p0'] });

    await clock.advance(3000);
    e.observeScale('ns/cs', 'create', 'p1');
    e.observeScale('ns/cs', 'create', 'p2');
    s = e.satisfiedExpectations('ns/cs');
    assert.equal(s.satisfied, false);
    assert.equal(s.unsatisfiedDuration, 3000, 'measured from the first unsatisfied check');
    assert.deepEqual(s.dirty, { create: [], delete: ['p0'] });

    e.observeScale('ns/cs', 'delete', 'p0');
    assert.equal(e.getExpectations('ns/cs'), undefined, 'entry dropped once empty');
    assert.equal(e.satisfiedExpectations('ns/cs').satisfied, true);
  });

  it('ignores observations nobody expected', () => {
    const e = new ScaleExpectations({ clock: new FakeClock() });
    e.observeScale('ns/cs', 'create', 'stray');
    e.expectScale('ns/cs', 'create', 'p1');
    e.observeScale('ns/cs', 'delete', 'p1');
    assert.equal(e.satisfiedExpectations('ns/cs').satisfied, false);
  });

  it('reports a timeout and calls the leakage hook once past the timeout', async () => {
    const clock = new FakeClock();
    const leaks: Array<[string, number]> = [];
    const e = new ScaleExpectations({ clock, timeout: 5 * minute, onTimeout: (k, d) => leaks.push([k, d]) });
    e.expectScale('ns/cs', 'create', 'p1');
    e.satisfiedExpectations('ns/cs');
    await clock.advance(5 * minute - 1);
    assert.equal(e.satisfiedExpectations('ns/cs').timedOut, false);
    assert.deepEqual(leaks, []);
    await clock.advance(1);
    const s = e.satisfiedExpectations('ns/cs');
    assert.equal(s.timedOut, true);
    assert.equal(s.unsatisfiedDuration, 5 * minute);
    assert.deepEqual(leaks, [['ns/cs', 5 * minute]]);
    e.deleteExpectations('ns/cs');
    assert.equal(e.satisfiedExpectations('ns/cs').satisfied, true);
  });

  it('defaults the timeout to 5 minutes', () => {
    assert.equal(new ScaleExpectations().timeout, 5 * minute);
  });
});

describe('UpdateExpectations', () => {
  it('waits until updated pods show the revision', async () => {
    const clock = new FakeClock();
    const e = new UpdateExpectations<Pod>(atRevision, { clock });
    e.expectUpdated('ns/cs', 'rev2', pod('p1'));
    e.expectUpdated('ns/cs', 'rev2', pod('p2'));

    let s = e.satisfiedExpectations('ns/cs', 'rev2');
    assert.equal(s.satisfied, false);
    assert.deepEqual(s.dirty, ['ns/p1', 'ns/p2']);

    e.observeUpdated('ns/cs', 'rev2', pod('p1', 'rev1')); // cache still stale
    await clock.advance(1000);
    s = e.satisfiedExpectations('ns/cs', 'rev2');
    assert.deepEqual(s.dirty, ['ns/p1', 'ns/p2']);
    assert.equal(s.unsatisfiedDuration, 1000);

    e.observeUpdated('ns/cs', 'rev2', pod('p1', 'rev2'));
    e.observeUpdated('ns/cs', 'rev2', pod('p2', 'rev2'));
    assert.equal(e.satisfiedExpectations('ns/cs', 'rev2').satisfied, true);
  });

  it('treats expectations for another revision as satisfied and resets on a new revision', () => {
    const e = new UpdateExpectations<Pod>(atRevision, { clock: new FakeClock() });
    e.expectUpdated('ns/cs', 'rev2', pod('p1'));
    assert.equal(e.satisfiedExpectations('ns/cs', 'rev3').satisfied, true);
    e.expectUpdated('ns/cs', 'rev3', pod('p2'));
    assert.deepEqual(e.satisfiedExpectations('ns/cs', 'rev3').dirty, ['ns/p2']);
    // An observation for a different revision drops the whole entry.
    e.observeUpdated('ns/cs', 'rev2', pod('p2', 'rev2'));
    assert.equal(e.satisfiedExpectations('ns/cs', 'rev3').satisfied, true);
  });

  it('deleteObject stops waiting for a deleted pod', () => {
    const e = new UpdateExpectations<Pod>(atRevision, { clock: new FakeClock() });
    e.expectUpdated('ns/cs', 'rev2', pod('p1'));
    e.deleteObject('ns/cs', pod('p1'));
    assert.equal(e.satisfiedExpectations('ns/cs', 'rev2').satisfied, true);
  });

  it('times out', async () => {
    const clock = new FakeClock();
    let leaks = 0;
    const e = new UpdateExpectations<Pod>(atRevision, { clock, timeout: 1000, onTimeout: () => leaks++ });
    e.expectUpdated('ns/cs', 'rev2', pod('p1'));
    e.satisfiedExpectations('ns/cs', 'rev2');
    await clock.advance(1000);
    assert.equal(e.satisfiedExpectations('ns/cs', 'rev2').timedOut, true);
    assert.equal(leaks, 1);
    e.deleteExpectations('ns/cs');
    assert.equal(e.satisfiedExpectations('ns/cs', 'rev2').satisfied, true);
  });
});

describe('ResourceVersionExpectations', () => {
  const obj = (rv: string) => ({ metadata: { uid: 'u1', resourceVersion: rv } });

  it('is unsatisfied until the cache shows the written resourceVersion', async () => {
    const clock = new FakeClock();
    const e = new ResourceVersionExpectations({ clock });
    e.expect(obj('105'));
    assert.equal(e.isSatisfied(obj('100')).satisfied, false);
    await clock.advance(2000);
    assert.deepEqual(e.isSatisfied(obj('104')), { satisfied: false, unsatisfiedDuration: 2000, timedOut: false });
    assert.equal(e.isSatisfied(obj('105')).satisfied, true);
    assert.equal(e.isSatisfied(obj('1')).satisfied, true, 'entry was cleared');
  });

  it('keeps the highest expected version and observe clears it', () => {
    const e = new ResourceVersionExpectations({ clock: new FakeClock() });
    e.expect(obj('200'));
    e.expect(obj('150'));
    e.observe(obj('199'));
    assert.equal(e.isSatisfied(obj('199')).satisfied, false);
    e.observe(obj('250'));
    assert.equal(e.isSatisfied(obj('100')).satisfied, true);
  });

  it('times out and can be deleted', async () => {
    const clock = new FakeClock();
    const e = new ResourceVersionExpectations({ clock, timeout: 10_000 });
    e.expect(obj('5'));
    e.isSatisfied(obj('4'));
    await clock.advance(10_000);
    assert.equal(e.isSatisfied(obj('4')).timedOut, true);
    e.delete(obj('4'));
    assert.equal(e.isSatisfied(obj('4')).satisfied, true);
  });

  it('compares resourceVersions numerically, tolerating garbage', () => {
    assert.equal(isResourceVersionNewer('9', '10'), true);
    assert.equal(isResourceVersionNewer('10', '9'), false);
    assert.equal(isResourceVersionNewer('10', '10'), true);
    assert.equal(isResourceVersionNewer('18446744073709551615', '18446744073709551616'), true);
    assert.equal(isResourceVersionNewer('', '1'), true, 'nothing expected');
    assert.equal(isResourceVersionNewer('abc', '1'), true, 'unusable expectation never blocks');
    assert.equal(isResourceVersionNewer('1', 'abc'), false, 'unusable candidate never satisfies');
  });
});

describe('expectationGate', () => {
  const log = pino({ level: 'silent' });

  it('goes on when every check is satisfied', () => {
    const clock = new FakeClock(0);
    const scale = new ScaleExpectations({ clock, timeout: minute });
    const rv = new ResourceVersionExpectations({ clock, timeout: minute });
    assert.equal(
      expectationGate([scale.check('ns/a', 'scale'), rv.check({ metadata: { uid: 'u', resourceVersion: '3' } }, 'rv')], log),
      undefined,
    );
  });

  it('waits until the first unsatisfied check would time out, or its own wait', async () => {
    const clock = new FakeClock(0);
    const scale = new ScaleExpectations({ clock, timeout: minute });
    const rv = new ResourceVersionExpectations({ clock, timeout: minute });
    scale.expectScale('ns/a', 'create', 'p1');
    assert.equal(expectationGate([scale.check('ns/a', 'scale')], log), minute);
    await clock.advance(10_000);
    assert.equal(expectationGate([scale.check('ns/a', 'scale')], log), minute - 10_000);
    rv.expect({ metadata: { uid: 'u', resourceVersion: '9' } });
    assert.equal(expectationGate([rv.check({ metadata: { uid: 'u', resourceVersion: '3' } }, 'rv', 1000)], log), 1000);
  });

  it('asks later checks only once earlier ones pass', () => {
    const clock = new FakeClock(0);
    const scale = new ScaleExpectations({ clock, timeout: minute });
    scale.expectScale('ns/a', 'create', 'p1');
    let asked = false;
    const later = {
      what: 'later',
      timeoutMs: minute,
      drop() {},
      satisfied: () => {
        asked = true;
        return { satisfied: true, unsatisfiedDuration: 0, timedOut: false };
      },
    };
    assert.equal(expectationGate([scale.check('ns/a', 'scale'), later], log), minute);
    assert.equal(asked, false);
  });

  it('drops a timed-out expectation (running onDrop) and goes on', async () => {
    const clock = new FakeClock(0);
    const scale = new ScaleExpectations({ clock, timeout: minute });
    scale.expectScale('ns/a', 'create', 'p1');
    expectationGate([scale.check('ns/a', 'scale')], log);
    await clock.advance(minute);
    let dropped = 0;
    assert.equal(expectationGate([scale.check('ns/a', 'scale', () => dropped++)], log), undefined);
    assert.equal(dropped, 1);
    assert.equal(scale.getExpectations('ns/a'), undefined);
  });
});
