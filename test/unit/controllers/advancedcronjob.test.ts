// AdvancedCronJob planner on a test clock, term for term against behaviour spec §8 (the CronJob v2
// algorithm): missed start times, startingDeadlineSeconds, the >100 guard, concurrency policies,
// paused, history limits, child naming and status — for Job, BroadcastJob and ImageListPullJob
// templates.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  childOutcome,
  effectiveSchedule,
  planAdvancedCronJob,
  templateKind,
  type AdvancedCronJob,
  type CronChild,
  type TemplateKind,
} from '../../../src/controllers/advancedcronjob/plan.ts';
import { metaTime } from '../../../src/util/clock.ts';
import { formatInZone, localTimeZone } from '../../../src/util/cron.ts';

const NOW = Date.parse('2026-07-01T12:00:30Z');
const min = (m: number) => Date.parse('2026-07-01T12:00:00Z') + m * 60_000;

type Spec = NonNullable<AdvancedCronJob['spec']>;
const JOB_TEMPLATE: Spec['template'] = {
  jobTemplate: {
    metadata: { labels: { team: 'a' }, annotations: { note: 'n' } },
    spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } },
  },
};

function cronJob(spec: Partial<Spec> = {}, status?: AdvancedCronJob['status'], created = metaTime(min(-30))): AdvancedCronJob {
  return {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'AdvancedCronJob',
    metadata: { name: 'acj', namespace: 'ns', uid: 'acj-uid', resourceVersion: '3', creationTimestamp: created },
    spec: { schedule: '*/1 * * * *', template: JOB_TEMPLATE, concurrencyPolicy: 'Allow', ...spec },
    ...(status ? { status } : {}),
  };
}

function child(scheduledMs: number, outcome?: 'Complete' | 'Failed', kind: TemplateKind = 'Job'): CronChild {
  const name = `acj-${scheduledMs / 1000}`;
  const status: CronChild['status'] = { startTime: metaTime(scheduledMs + 1000) };
  if (kind === 'ImageListPullJob') {
    Object.assign(
      status,
      { desired: 2, succeeded: outcome === 'Complete' ? 2 : 1 },
      outcome ? { completionTime: metaTime(scheduledMs + 5000) } : {},
    );
  } else if (outcome) status.conditions = [{ type: outcome, status: 'True' }];
  return {
    apiVersion: kind === 'Job' ? 'batch/v1' : 'apps.kruise.io/v1beta1',
    kind,
    metadata: {
      name,
      namespace: 'ns',
      uid: `uid-${name}`,
      resourceVersion: '9',
      annotations: { 'apps.kruise.io/scheduled-at': new Date(scheduledMs).toISOString().replace('.000Z', 'Z') },
    },
    status,
  };
}

describe('schedule', () => {
  test('timeZone becomes a TZ= prefix unless the schedule names its zone', () => {
    assert.equal(effectiveSchedule(cronJob({ schedule: '0 10 * * ?', timeZone: 'Asia/Shanghai' })), 'TZ=Asia/Shanghai 0 10 * * ?');
    assert.equal(effectiveSchedule(cronJob({ schedule: 'CRON_TZ=UTC 0 10 * * ?' })), 'CRON_TZ=UTC 0 10 * * ?');
    assert.equal(effectiveSchedule(cronJob({ schedule: '0 10 * * ?' })), '0 10 * * ?');
  });

  test('spec example: "0 10 * * ?" in Asia/Shanghai after 2022-09-05T09:01Z runs 2022-09-06T02:00Z', () => {
    const now = Date.parse('2022-09-05T09:01:00Z');
    const j = cronJob(
      { schedule: '0 10 * * ?', timeZone: 'Asia/Shanghai' },
      { lastScheduleTime: '2022-09-05T02:00:00Z' },
      '2022-09-01T00:00:00Z',
    );
    const plan = planAdvancedCronJob({ cronJob: j, children: [], nowMs: now });
    assert.equal(plan.create, undefined);
    assert.equal(now + plan.requeueAfterMs!, Date.parse('2022-09-06T02:00:00Z'));
  });

  test('the latest missed start time is run, named <acj>-<unix seconds> and annotated, with the template metadata', () => {
    const j = cronJob({}, { lastScheduleTime: metaTime(min(-3)) });
    const plan = planAdvancedCronJob({ cronJob: j, children: [], nowMs: NOW });
    assert.equal(plan.create?.metadata.name, `acj-${min(0) / 1000}`);
    assert.equal(plan.create?.kind, 'Job');
    assert.equal(plan.create?.apiVersion, 'batch/v1');
    assert.deepEqual(plan.create?.metadata.labels, { team: 'a' });
    // Formatted in the manager's zone, as Go's time.Local ("…Z" under UTC).
    const scheduledAt = formatInZone(min(0), localTimeZone());
    assert.deepEqual(plan.create?.metadata.annotations, { note: 'n', 'apps.kruise.io/scheduled-at': scheduledAt });
    assert.equal(Date.parse(scheduledAt), min(0));
    assert.deepEqual(plan.create?.metadata.ownerReferences, [
      {
        apiVersion: 'apps.kruise.io/v1beta1',
        kind: 'AdvancedCronJob',
        name: 'acj',
        uid: 'acj-uid',
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    assert.deepEqual(plan.create?.spec, JOB_TEMPLATE.jobTemplate?.spec);
    assert.equal(plan.requeueAfterMs, 30_000);
  });

  test('nothing missed since the last run: wait for the next start time', () => {
    const plan = planAdvancedCronJob({ cronJob: cronJob(), children: [child(min(0), 'Complete')], nowMs: NOW });
    assert.equal(plan.create, undefined);
    assert.equal(plan.requeueAfterMs, 30_000);
  });

  test('startingDeadlineSeconds: a missed start older than the deadline is skipped', () => {
    const now = min(0) + 50_000;
    const late = planAdvancedCronJob({
      cronJob: cronJob({ startingDeadlineSeconds: 30 }, { lastScheduleTime: metaTime(min(-1)) }),
      children: [],
      nowMs: now,
    });
    assert.equal(late.create, undefined);
    const inTime = planAdvancedCronJob({
      cronJob: cronJob({ startingDeadlineSeconds: 60 }, { lastScheduleTime: metaTime(min(-1)) }),
      children: [],
      nowMs: now,
    });
    assert.equal(inTime.create?.metadata.name, `acj-${min(0) / 1000}`);
  });

  test('more than 100 missed start times: error event, nothing created; a deadline bounds the count', () => {
    const old = metaTime(min(-200));
    const plan = planAdvancedCronJob({ cronJob: cronJob({}, undefined, old), children: [], nowMs: NOW });
    assert.equal(plan.create, undefined);
    assert.deepEqual(plan.events, [
      {
        type: 'Warning',
        reason: 'TooManyMissedTimes',
        message: 'too many missed start times (> 100). Set or decrease .spec.startingDeadlineSeconds or check clock skew',
      },
    ]);
    const bounded = planAdvancedCronJob({ cronJob: cronJob({ startingDeadlineSeconds: 600 }, undefined, old), children: [], nowMs: NOW });
    assert.equal(bounded.create?.metadata.name, `acj-${min(0) / 1000}`);
  });

  test('exactly 100 missed start times are still run', () => {
    const plan = planAdvancedCronJob({ cronJob: cronJob({}, undefined, metaTime(min(-100))), children: [], nowMs: NOW });
    assert.ok(plan.create);
  });

  test('an unparsable schedule: event, no requeue', () => {
    const plan = planAdvancedCronJob({ cronJob: cronJob({ schedule: '61 * * * *' }), children: [], nowMs: NOW });
    assert.equal(plan.create, undefined);
    assert.equal(plan.requeueAfterMs, undefined);
    assert.equal(plan.events[0]?.reason, 'UnparseableSchedule');
  });
});

describe('concurrency, paused, history, status', () => {
  const last = { lastScheduleTime: metaTime(min(-1)) };
  test('Forbid: an active child blocks the run; Allow runs alongside; Replace deletes the active child first', () => {
    const active = [child(min(-1))];
    const forbid = planAdvancedCronJob({ cronJob: cronJob({ concurrencyPolicy: 'Forbid' }, last), children: active, nowMs: NOW });
    assert.equal(forbid.create, undefined);
    assert.equal(forbid.requeueAfterMs, 30_000);
    const allow = planAdvancedCronJob({ cronJob: cronJob({ concurrencyPolicy: 'Allow' }, last), children: active, nowMs: NOW });
    assert.ok(allow.create);
    assert.deepEqual(allow.deleteActive, []);
    const replace = planAdvancedCronJob({ cronJob: cronJob({ concurrencyPolicy: 'Replace' }, last), children: active, nowMs: NOW });
    assert.ok(replace.create);
    assert.deepEqual(
      replace.deleteActive.map((c) => c.metadata.name),
      [active[0]!.metadata.name],
    );
    const finished = planAdvancedCronJob({
      cronJob: cronJob({ concurrencyPolicy: 'Forbid' }, last),
      children: [child(min(-1), 'Complete')],
      nowMs: NOW,
    });
    assert.ok(finished.create);
  });

  test('paused: status and history still kept, nothing created', () => {
    const children = [child(min(-3), 'Complete'), child(min(-2), 'Complete')];
    const plan = planAdvancedCronJob({ cronJob: cronJob({ paused: true, successfulJobsHistoryLimit: 1 }), children, nowMs: NOW });
    assert.equal(plan.create, undefined);
    assert.equal(plan.requeueAfterMs, undefined);
    assert.deepEqual(
      plan.deleteHistory.map((c) => c.metadata.name),
      [children[0]!.metadata.name],
    );
  });

  test('history limits delete the oldest finished children beyond them; no limit keeps all', () => {
    const ok = [min(-5), min(-4), min(-3), min(-2)].map((t) => child(t, 'Complete'));
    const bad = [min(-7), min(-6)].map((t) => child(t, 'Failed'));
    const children = [ok[2]!, bad[1]!, ok[0]!, ok[3]!, bad[0]!, ok[1]!];
    const plan = planAdvancedCronJob({
      cronJob: cronJob({ successfulJobsHistoryLimit: 3, failedJobsHistoryLimit: 1 }),
      children,
      nowMs: NOW,
    });
    assert.deepEqual(
      plan.deleteHistory.map((c) => c.metadata.name),
      [bad[0]!.metadata.name, ok[0]!.metadata.name],
    );
    const zero = planAdvancedCronJob({ cronJob: cronJob({ successfulJobsHistoryLimit: 0 }), children: ok, nowMs: NOW });
    assert.equal(zero.deleteHistory.length, 4);
    assert.deepEqual(planAdvancedCronJob({ cronJob: cronJob(), children, nowMs: NOW }).deleteHistory, []);
  });

  test('status: type, active references, lastScheduleTime from the newest child', () => {
    const children = [child(min(-2), 'Complete'), child(min(-1))];
    const plan = planAdvancedCronJob({ cronJob: cronJob({ concurrencyPolicy: 'Forbid' }), children, nowMs: NOW });
    assert.deepEqual(plan.status, {
      type: 'Job',
      active: [
        {
          kind: 'Job',
          namespace: 'ns',
          name: children[1]!.metadata.name,
          uid: children[1]!.metadata.uid,
          apiVersion: 'batch/v1',
          resourceVersion: '9',
        },
      ],
      lastScheduleTime: metaTime(min(-1)),
    });
    // Unchanged: nothing to write.
    const again = planAdvancedCronJob({ cronJob: cronJob({ concurrencyPolicy: 'Forbid' }, plan.status), children, nowMs: NOW });
    assert.equal(again.status, undefined);
  });

  test('with every child gone, lastScheduleTime is kept, so the last run is not started again', () => {
    const plan = planAdvancedCronJob({
      cronJob: cronJob({}, { type: 'Job', lastScheduleTime: metaTime(min(0)) }),
      children: [],
      nowMs: NOW,
    });
    assert.equal(plan.status, undefined);
    assert.equal(plan.create, undefined);
  });
});

describe('templates', () => {
  test('template kind: Job, ImageListPullJob, else BroadcastJob', () => {
    assert.equal(templateKind(cronJob()), 'Job');
    assert.equal(templateKind(cronJob({ template: { imageListPullJobTemplate: { spec: { images: ['a'] } } } })), 'ImageListPullJob');
    assert.equal(templateKind(cronJob({ template: { broadcastJobTemplate: { spec: { template: {} } } } })), 'BroadcastJob');
  });

  test('BroadcastJob children: created from broadcastJobTemplate; finished by their Complete/Failed condition', () => {
    const template = {
      broadcastJobTemplate: { metadata: { labels: { l: 'b' } }, spec: { parallelism: 2, template: { spec: { containers: [] } } } },
    };
    const plan = planAdvancedCronJob({ cronJob: cronJob({ template }, { lastScheduleTime: metaTime(min(-1)) }), children: [], nowMs: NOW });
    assert.equal(plan.kind, 'BroadcastJob');
    assert.equal(plan.create?.kind, 'BroadcastJob');
    assert.equal(plan.create?.apiVersion, 'apps.kruise.io/v1beta1');
    assert.deepEqual(plan.create?.spec, template.broadcastJobTemplate.spec);
    assert.deepEqual(plan.create?.metadata.labels, { l: 'b' });
    assert.equal(childOutcome('BroadcastJob', child(0, 'Failed', 'BroadcastJob')), 'Failed');
    assert.equal(childOutcome('BroadcastJob', child(0, undefined, 'BroadcastJob')), undefined);
  });

  test('ImageListPullJob children: finished at completionTime, Complete only when all succeeded', () => {
    assert.equal(childOutcome('ImageListPullJob', child(0, 'Complete', 'ImageListPullJob')), 'Complete');
    assert.equal(childOutcome('ImageListPullJob', child(0, 'Failed', 'ImageListPullJob')), 'Failed');
    assert.equal(childOutcome('ImageListPullJob', child(0, undefined, 'ImageListPullJob')), undefined);
    const template = { imageListPullJobTemplate: { spec: { images: ['nginx:1'] } } };
    const plan = planAdvancedCronJob({
      cronJob: cronJob({ template, concurrencyPolicy: 'Forbid' }, { lastScheduleTime: metaTime(min(-1)) }),
      children: [],
      nowMs: NOW,
    });
    assert.equal(plan.create?.kind, 'ImageListPullJob');
    assert.deepEqual(plan.create?.spec, { images: ['nginx:1'] });
  });
});
