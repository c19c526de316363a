import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { fieldErrorString } from '../../../src/apis/field-errors.ts';
import { mutateAdvancedCronJob, parseStandardCron, validateAdvancedCronJob } from '../../../src/webhooks/advancedcronjob/index.ts';
import { ctx, examples } from './helpers.ts';

const V = 'apps.kruise.io/v1beta1';
function acj(spec: Record<string, any> = {}): any {
  return {
    apiVersion: V,
    kind: 'AdvancedCronJob',
    metadata: { name: 'acj' },
    spec: {
      schedule: '*/5 * * * *',
      template: {
        broadcastJobTemplate: { spec: { template: { spec: { containers: [{ name: 'c', image: 'busybox' }], restartPolicy: 'Never' } } } },
      },
      ...spec,
    },
  };
}
function errors(obj: any, op: 'CREATE' | 'UPDATE' = 'CREATE', old?: any): string[] {
  const c = ctx(V, op);
  mutateAdvancedCronJob(obj, c);
  if (old) mutateAdvancedCronJob(old, c);
  return validateAdvancedCronJob(obj, old, c).map(fieldErrorString);
}

describe('AdvancedCronJob defaulting', () => {
  test('defaults and idempotence', () => {
    const obj = acj();
    mutateAdvancedCronJob(obj, ctx(V));
    assert.equal(obj.spec.concurrencyPolicy, 'Allow');
    assert.equal(obj.spec.paused, false);
    assert.equal(obj.spec.successfulJobsHistoryLimit, 3);
    assert.equal(obj.spec.failedJobsHistoryLimit, 1);
    assert.equal(obj.spec.template.broadcastJobTemplate.spec.template.spec.dnsPolicy, 'ClusterFirst');
    const again = structuredClone(obj);
    mutateAdvancedCronJob(again, ctx(V));
    assert.deepEqual(again, obj);
  });
  test('ImageListPullJob template defaults to Replace', () => {
    const obj = acj({ template: { imageListPullJobTemplate: { spec: { images: ['a:1'] } } } });
    mutateAdvancedCronJob(obj, ctx(V));
    assert.equal(obj.spec.concurrencyPolicy, 'Replace');
    assert.deepEqual(obj.spec.template.imageListPullJobTemplate.spec, {
      images: ['a:1'],
      completionPolicy: { type: 'Always' },
      pullPolicy: { timeoutSeconds: 600, backoffLimit: 3 },
      imagePullPolicy: 'IfNotPresent',
    });
  });
});

describe('AdvancedCronJob validation', () => {
  test('examples pass after defaulting', () => {
    for (const doc of examples('advancedcronjob.yaml')) assert.deepEqual(errors(doc), [], doc.metadata.name);
  });
  test('cron grammar', () => {
    for (const ok of ['0 10 * * ?', '*/1 * * * *', 'TZ=Asia/Shanghai 0 1 * * mon-fri', '@daily', '@every 1h30m', '0 0 1,15 jan-jun *'])
      parseStandardCron(ok);
    assert.throws(() => parseStandardCron('* * *'), /^Error: expected exactly 5 fields, found 3: \[\* \* \*\]$/);
    assert.throws(() => parseStandardCron('60 * * * *'), /end of range \(60\) above maximum \(59\): 60/);
    assert.throws(() => parseStandardCron('x * * * *'), /failed to parse int from x/);
  });
  const cases: Array<[string, any, string[]]> = [
    [
      'empty schedule',
      acj({ schedule: '' }),
      [
        'spec.schedule: Invalid value: "": schedule cannot be empty, please provide valid cron schedule.',
        'spec.schedule: Invalid value: "": empty spec string',
      ],
    ],
    [
      'TZ with timeZone',
      acj({ schedule: 'TZ=UTC 0 * * * *', timeZone: 'Etc/UTC' }),
      ['spec.schedule: Invalid value: "TZ=UTC 0 * * * *": cannot use both timeZone field and TZ or CRON_TZ in schedule'],
    ],
    ['empty timeZone', acj({ timeZone: '' }), ['spec.timeZone: Invalid value: "": timeZone must be nil or non-empty string']],
    [
      'Local timeZone',
      acj({ timeZone: 'Local' }),
      ['spec.timeZone: Invalid value: "Local": timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones'],
    ],
    ['unknown timeZone', acj({ timeZone: 'Mars/Base' }), ['spec.timeZone: Invalid value: "Mars/Base": unknown time zone Mars/Base']],
    [
      'no template',
      acj({ template: {} }),
      [
        'spec.template: Forbidden: spec must have one template, either JobTemplate or BroadcastJobTemplate or ImageListPullJobTemplate should be provided',
      ],
    ],
    [
      'two templates',
      acj({
        template: {
          jobTemplate: { spec: { template: { spec: { containers: [{ name: 'c', image: 'x' }], restartPolicy: 'Never' } } } },
          broadcastJobTemplate: { spec: { template: { spec: { containers: [{ name: 'c', image: 'x' }] } } } },
        },
      }),
      [
        'spec.template: Forbidden: spec can have only one template, either JobTemplate or BroadcastJobTemplate or ImageListPullJobTemplate should be provided',
      ],
    ],
    [
      'negative history limit',
      acj({ failedJobsHistoryLimit: -1 }),
      ['spec.failedJobsHistoryLimit: Invalid value: -1: must be greater than or equal to 0'],
    ],
    [
      'invalid job pod',
      acj({ template: { jobTemplate: { spec: { template: { spec: { containers: [{ name: 'C', image: 'x' }] } } } } } }),
      [
        `spec.template.spec.containers[0].name: Invalid value: "C": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
      ],
    ],
    [
      'ILPJ duplicate image',
      acj({ concurrencyPolicy: 'Replace', template: { imageListPullJobTemplate: { spec: { images: ['a:1', 'a:1'] } } } }),
      ['spec.template.imageListPullJobTemplate.spec.images: Invalid value: ["a:1","a:1"]: images cannot have duplicate values'],
    ],
    [
      'ILPJ with Allow',
      acj({ concurrencyPolicy: 'Allow', template: { imageListPullJobTemplate: { spec: { images: ['a:1'] } } } }),
      ['spec.spec.concurrencyPolicy: Invalid value: "Allow": concurrencyPolicy should be Replace or Forbid, but current value is: Allow'],
    ],
    [
      'ILPJ ttl',
      acj({
        concurrencyPolicy: 'Forbid',
        template: {
          imageListPullJobTemplate: { spec: { images: ['a:1'], completionPolicy: { type: 'Always', ttlSecondsAfterFinished: 5 } } },
        },
      }),
      [
        'spec.template.imageListPullJobTemplate.spec.completionPolicy.ttlSecondsAfterFinished: Invalid value: 5: ttlSecondsAfterFinished is not supported in advancedCronJob',
      ],
    ],
    [
      'ILPJ deadline over a day',
      acj({
        concurrencyPolicy: 'Forbid',
        template: {
          imageListPullJobTemplate: { spec: { images: ['a:1'], completionPolicy: { type: 'Always', activeDeadlineSeconds: 86401 } } },
        },
      }),
      [
        'spec.template.imageListPullJobTemplate.spec.completionPolicy.activeDeadlineSeconds: Invalid value: 86401: activeDeadlineSeconds must be less than 86400, current value is: 86401',
      ],
    ],
  ];
  for (const [name, obj, want] of cases) test(name, () => assert.deepEqual(errors(obj), want));

  test('update: only schedule-like fields may change', () => {
    assert.deepEqual(errors(acj({ schedule: '0 * * * *', paused: true, timeZone: 'Etc/UTC' }), 'UPDATE', acj()), []);
    const changed = acj();
    changed.spec.template.broadcastJobTemplate.spec.template.spec.containers[0].image = 'busybox:2';
    assert.deepEqual(errors(changed, 'UPDATE', acj()), [
      "spec: Forbidden: updates to advancedcronjob spec for fields other than 'imageListPullJobTemplate', 'schedule', 'concurrencyPolicy', 'successfulJobsHistoryLimit', 'failedJobsHistoryLimit', 'startingDeadlineSeconds', 'timeZone' and 'paused' are forbidden",
    ]);
    const ilpj = (images: string[]) => acj({ template: { imageListPullJobTemplate: { spec: { images } } } });
    assert.deepEqual(errors(ilpj(['a:2']), 'UPDATE', ilpj(['a:1'])), []);
  });
});
