import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { fieldErrorString } from '../../../src/apis/field-errors.ts';
import { mutateCloneSet, registrations, validateCloneSet } from '../../../src/webhooks/cloneset/index.ts';
import { admit } from '../../../src/runtime/webhook/admission.ts';
import { AdmissionDenied } from '../../../src/runtime/webhook/types.ts';
import { FEATURE_GATE_DEFAULTS } from '../../../src/apis/features.ts';
import { ctx, examples, messages } from './helpers.ts';

const BETA = 'apps.kruise.io/v1beta1';
const ALPHA = 'apps.kruise.io/v1alpha1';

function cs(spec: Record<string, any> = {}, apiVersion = BETA): any {
  return {
    apiVersion,
    kind: 'CloneSet',
    metadata: { name: 'demo', namespace: 'default', uid: 'cs-uid' },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: 'demo' } },
      template: { metadata: { labels: { app: 'demo' } }, spec: { containers: [{ name: 'main', image: 'nginx:1.25' }] } },
      ...spec,
    },
  };
}

async function defaultedErrors(obj: any, op: 'CREATE' | 'UPDATE' = 'CREATE', old?: any, gates = {}): Promise<string[]> {
  const c = ctx(obj.apiVersion, op, gates);
  mutateCloneSet(obj, c);
  if (old) mutateCloneSet(old, c);
  return (await validateCloneSet(obj, old, c)).map(fieldErrorString);
}

describe('CloneSet defaulting', () => {
  test('v1beta1 defaults, template defaults, idempotent', () => {
    const obj = cs({ replicas: undefined });
    mutateCloneSet(obj, ctx(BETA));
    assert.equal(obj.spec.replicas, 1);
    assert.equal(obj.spec.revisionHistoryLimit, 10);
    assert.deepEqual(obj.spec.updateStrategy, {
      type: 'RollingUpdate',
      rollingUpdate: { podUpdatePolicy: 'ReCreate', partition: 0, maxUnavailable: '20%', maxSurge: 0 },
    });
    const pod = obj.spec.template.spec;
    assert.equal(pod.restartPolicy, 'Always');
    assert.equal(pod.dnsPolicy, 'ClusterFirst');
    assert.equal(pod.terminationGracePeriodSeconds, 30);
    assert.equal(pod.schedulerName, 'default-scheduler');
    assert.deepEqual(pod.securityContext, {});
    assert.equal(pod.containers[0].imagePullPolicy, 'Always', 'Kruise pulls Always for in-place update');
    assert.equal(pod.containers[0].terminationMessagePath, '/dev/termination-log');
    assert.equal(pod.containers[0].terminationMessagePolicy, 'File');
    const again = structuredClone(obj);
    mutateCloneSet(again, ctx(BETA));
    assert.deepEqual(again, obj);
  });

  test('init container pull policy by tag, ports TCP, probes, volumes, VCTs', () => {
    const obj = cs({
      volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'] } }],
    });
    obj.spec.template.spec.initContainers = [
      { name: 'a', image: 'busybox' },
      { name: 'b', image: 'busybox:1.36' },
    ];
    obj.spec.template.spec.containers[0].ports = [{ containerPort: 80 }];
    obj.spec.template.spec.containers[0].readinessProbe = { httpGet: { port: 80 } };
    obj.spec.template.spec.volumes = [{ name: 'v' }, { name: 's', secret: { secretName: 'x' } }];
    mutateCloneSet(obj, ctx(BETA));
    const pod = obj.spec.template.spec;
    assert.equal(pod.initContainers[0].imagePullPolicy, 'Always');
    assert.equal(pod.initContainers[1].imagePullPolicy, 'IfNotPresent');
    assert.equal(pod.containers[0].ports[0].protocol, 'TCP');
    assert.deepEqual(pod.containers[0].readinessProbe, {
      httpGet: { port: 80, path: '/', scheme: 'HTTP' },
      timeoutSeconds: 1,
      periodSeconds: 10,
      successThreshold: 1,
      failureThreshold: 3,
    });
    assert.deepEqual(pod.volumes, [
      { name: 'v', emptyDir: {} },
      { name: 's', secret: { secretName: 'x', defaultMode: 420 } },
    ]);
    assert.equal(obj.spec.volumeClaimTemplates[0].spec.volumeMode, undefined); // v1.8.2 leaves it to the API server's PVC defaulting
    assert.deepEqual(obj.spec.volumeClaimTemplates[0].status, { phase: 'Pending' });
  });

  test('TemplateNoDefaults leaves the template alone; hostNetwork ports gate', () => {
    const obj = cs();
    mutateCloneSet(obj, ctx(BETA, 'CREATE', { TemplateNoDefaults: true }));
    assert.equal(obj.spec.template.spec.restartPolicy, undefined);
    assert.equal(obj.spec.replicas, 3);
    const net = cs();
    net.spec.template.spec.hostNetwork = true;
    net.spec.template.spec.containers[0].ports = [{ containerPort: 8080 }];
    mutateCloneSet(net, ctx(BETA, 'CREATE', { DefaultHostNetworkHostPortsInPodTemplates: true }));
    assert.equal(net.spec.template.spec.containers[0].ports[0].hostPort, 8080);
  });

  test('v1alpha1 flat update strategy; in-place gets inPlaceUpdateStrategy', () => {
    const obj = cs({ updateStrategy: { type: 'InPlaceIfPossible' } }, ALPHA);
    mutateCloneSet(obj, ctx(ALPHA));
    assert.deepEqual(obj.spec.updateStrategy, {
      type: 'InPlaceIfPossible',
      inPlaceUpdateStrategy: {},
      partition: 0,
      maxUnavailable: '20%',
      maxSurge: 0,
    });
    const plain = cs({}, ALPHA);
    mutateCloneSet(plain, ctx(ALPHA));
    assert.equal(plain.spec.updateStrategy.type, 'ReCreate');
  });
});

/**
 * A CloneSet as OpenKruise v1.8.2 stores it: every default set, and Go's `creationTimestamp: null`
 * in the template (a zero metav1.Time marshals so).
 */
function storedByUpstream(): any {
  const obj = cs({}, ALPHA);
  mutateCloneSet(obj, ctx(ALPHA));
  obj.spec.scaleStrategy = {};
  obj.spec.template.metadata.creationTimestamp = null;
  return obj;
}

/** The mutating webhook's answer to an UPDATE from `old` to `obj`, its patch decoded. */
async function mutateUpdate(obj: any, old: any, gates = {}): Promise<{ allowed: boolean; ops?: Array<{ op: string; path: string }> }> {
  const res = await admit(
    'mutate',
    registrations.filter((r) => r.mutate),
    {
      uid: 'u1',
      kind: { group: 'apps.kruise.io', version: 'v1alpha1', kind: 'CloneSet' },
      resource: { group: 'apps.kruise.io', version: 'v1alpha1', resource: 'clonesets' },
      namespace: 'default',
      name: 'demo',
      operation: 'UPDATE',
      userInfo: {},
      object: obj,
      oldObject: old,
    },
    { features: { ...FEATURE_GATE_DEFAULTS, ...gates } },
  );
  return { allowed: res.allowed, ops: res.patch ? JSON.parse(Buffer.from(res.patch, 'base64').toString()) : undefined };
}

describe('CloneSet defaulting on UPDATE, as upstream', () => {
  test('a label on a CloneSet stored by OpenKruise: no patch, so its spec (and generation) stay as stored', async () => {
    const old = storedByUpstream();
    const labelled = structuredClone(old);
    labelled.metadata.labels = { team: 'a' };
    assert.deepEqual(await mutateUpdate(labelled, old), { allowed: true, ops: undefined });
  });

  test('a template left undefaulted (TemplateNoDefaults then) is not defaulted by an update that leaves it alone', async () => {
    const old = cs({}, ALPHA);
    mutateCloneSet(old, ctx(ALPHA, 'CREATE', { TemplateNoDefaults: true }));
    const scaled = structuredClone(old);
    scaled.spec.replicas = 5;
    assert.deepEqual(await mutateUpdate(scaled, old), { allowed: true, ops: undefined }, 'a new template would roll every pod');
  });

  test('an update that changes the template has it defaulted (and the nulls the decode dropped removed)', async () => {
    const old = storedByUpstream();
    const changed = structuredClone(old);
    changed.spec.template.spec.containers = [{ name: 'main', image: 'nginx:1.26' }];
    const { ops } = await mutateUpdate(changed, old);
    const paths = ops!.map((o) => `${o.op} ${o.path}`).sort();
    assert.ok(paths.includes('add /spec/template/spec/containers/0/imagePullPolicy'), paths.join('\n'));
    assert.ok(paths.includes('remove /spec/template/metadata/creationTimestamp'), paths.join('\n'));
  });
});

describe('CloneSet validation', () => {
  test('examples pass after defaulting', async () => {
    for (const doc of examples('cloneset.yaml')) {
      assert.deepEqual(await defaultedErrors(doc), [], doc.metadata.name);
    }
  });

  const ru = (rollingUpdate: Record<string, any>) => ({ updateStrategy: { rollingUpdate } });
  const cases: Array<[string, any, string[]]> = [
    ['negative replicas', cs({ replicas: -1 }), ['spec.replicas: Invalid value: -1: must be greater than or equal to 0']],
    ['missing selector', cs({ selector: undefined }), ['spec.selector: Required value']],
    ['empty selector', cs({ selector: {} }), ['spec.selector: Invalid value: {}: empty selector is invalid for cloneset']],
    [
      'selector mismatch',
      cs({ selector: { matchLabels: { app: 'other' } } }),
      ['spec.template.metadata.labels: Invalid value: {"app":"demo"}: `selector` does not match template `labels`'],
    ],
    [
      'restartPolicy',
      (() => {
        const o = cs();
        o.spec.template.spec.restartPolicy = 'Never';
        return o;
      })(),
      ['spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"'],
    ],
    [
      'activeDeadlineSeconds',
      (() => {
        const o = cs();
        o.spec.template.spec.activeDeadlineSeconds = 10;
        return o;
      })(),
      ['spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in cloneset is not Supported'],
    ],
    [
      'no containers',
      (() => {
        const o = cs();
        o.spec.template.spec.containers = [];
        return o;
      })(),
      ['spec.template.spec.containers: Required value'],
    ],
    [
      'bad container name',
      (() => {
        const o = cs();
        o.spec.template.spec.containers[0].name = 'Main';
        return o;
      })(),
      [
        `spec.template.spec.containers[0].name: Invalid value: "Main": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
      ],
    ],
    [
      'duplicate container',
      (() => {
        const o = cs();
        o.spec.template.spec.containers.push({ name: 'main', image: 'x:1' });
        return o;
      })(),
      ['spec.template.spec.containers[1].name: Duplicate value: "main"'],
    ],
    [
      'missing image',
      (() => {
        const o = cs();
        delete o.spec.template.spec.containers[0].image;
        return o;
      })(),
      ['spec.template.spec.containers[0].image: Required value'],
    ],
    [
      'unknown mount',
      (() => {
        const o = cs();
        o.spec.template.spec.containers[0].volumeMounts = [{ name: 'nope', mountPath: '/d' }];
        return o;
      })(),
      ['spec.template.spec.containers[0].volumeMounts[0].name: Not found: "nope"'],
    ],
    [
      'duplicate podsToDelete',
      cs({ scaleStrategy: { podsToDelete: ['a', 'a'] } }),
      ['spec.scaleStrategy.podsToDelete: Invalid value: ["a","a"]: duplicated items [a]'],
    ],
    [
      'bad podUpdatePolicy',
      cs(ru({ podUpdatePolicy: 'Foo' })),
      [`spec.updateStrategy.rollingUpdate.podUpdatePolicy: Invalid value: "Foo": must be 'ReCreate', 'InPlaceIfPossible' or 'InPlaceOnly'`],
    ],
    [
      'bad type',
      cs({ updateStrategy: { type: 'Foo' } }),
      [`spec.updateStrategy.type: Invalid value: "Foo": must be 'RollingUpdate' or 'OnDelete'`],
    ],
    [
      'partition without %',
      cs(ru({ partition: '5' })),
      [
        'spec.updateStrategy.rollingUpdate.partition: Invalid value: "5": failed GetScaledValueFromIntOrPercent for partition: invalid value for IntOrString: invalid type: string is not a percentage',
      ],
    ],
    [
      'maxSurge with InPlaceOnly',
      cs(ru({ podUpdatePolicy: 'InPlaceOnly', maxSurge: 1 })),
      ['spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: "1": can not use maxSurge with strategy type InPlaceOnly'],
    ],
    [
      'both below 1',
      cs(ru({ maxUnavailable: 0, maxSurge: 0 })),
      ['spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: 0: maxUnavailable and maxSurge should not both be less than 1'],
    ],
    [
      'priority strategy',
      cs(
        ru({
          priorityStrategy: {
            orderPriority: [{ orderedKey: 'a' }],
            weightPriority: [{ weight: 1, matchSelector: { matchLabels: { a: 'b' } } }],
          },
        }),
      ),
      ['spec.updateStrategy.rollingUpdate.priorityStrategy: Required value: only one of weightPriority and orderPriority can be used'],
    ],
    [
      'scatter strategy',
      cs(
        ru({
          scatterStrategy: [
            { key: 'a', value: 'b' },
            { key: 'a', value: 'b' },
          ],
        }),
      ),
      ['spec.updateStrategy.rollingUpdate.scatterStrategy: Required value: duplicated key=a value=b'],
    ],
    [
      'progressDeadlineSeconds',
      cs({ minReadySeconds: 60, progressDeadlineSeconds: 60 }),
      ['spec.progressDeadlineSeconds: Invalid value: 60: must be greater than minReadySeconds'],
    ],
    // Upstream's own words (pkg/webhook/cloneset/validating), the field name repeated in the detail.
    [
      'pre-download parallelism percent',
      cs(ru({ inPlaceUpdateStrategy: { imagePreDownloadParallelism: '10%' } })),
      [
        'spec.updateStrategy.rollingUpdate.inPlaceUpdateStrategy.imagePreDownloadParallelism: Invalid value: "10%": imagePreDownloadParallelism does not support percentage value',
      ],
    ],
    [
      'pre-download parallelism not a number',
      cs(ru({ inPlaceUpdateStrategy: { imagePreDownloadParallelism: 'ten' } })),
      [
        'spec.updateStrategy.rollingUpdate.inPlaceUpdateStrategy.imagePreDownloadParallelism: Invalid value: "ten": imagePreDownloadParallelism must be a valid integer: strconv.ParseInt: parsing "ten": invalid syntax',
      ],
    ],
    [
      'pre-download parallelism out of int32',
      cs(ru({ inPlaceUpdateStrategy: { imagePreDownloadParallelism: '2147483648' } })),
      [
        'spec.updateStrategy.rollingUpdate.inPlaceUpdateStrategy.imagePreDownloadParallelism: Invalid value: "2147483648": imagePreDownloadParallelism must be a valid integer: strconv.ParseInt: parsing "2147483648": value out of range',
      ],
    ],
    [
      'pre-download parallelism negative',
      cs(ru({ inPlaceUpdateStrategy: { imagePreDownloadParallelism: -1 } })),
      [
        'spec.updateStrategy.rollingUpdate.inPlaceUpdateStrategy.imagePreDownloadParallelism: Invalid value: -1: imagePreDownloadParallelism must be non-negative',
      ],
    ],
    [
      'pre-download parallelism negative string',
      cs(ru({ inPlaceUpdateStrategy: { imagePreDownloadParallelism: '-2' } })),
      [
        'spec.updateStrategy.rollingUpdate.inPlaceUpdateStrategy.imagePreDownloadParallelism: Invalid value: "-2": imagePreDownloadParallelism must be non-negative',
      ],
    ],
    [
      'bad name',
      (() => {
        const o = cs();
        o.metadata.name = 'Bad_Name';
        return o;
      })(),
      [
        `metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
      ],
    ],
    [
      'v1alpha1 bad type',
      cs({ updateStrategy: { type: 'RollingUpdate' } }, ALPHA),
      [`spec.updateStrategy.type: Invalid value: "RollingUpdate": must be 'ReCreate', InPlaceIfPossible or 'InPlaceOnly'`],
    ],
    [
      'v1alpha1 partition',
      cs({ updateStrategy: { partition: -2 } }, ALPHA),
      ['spec.updateStrategy.partition: Invalid value: -2: must be greater than or equal to 0'],
    ],
  ];
  for (const [name, obj, want] of cases) {
    test(name, async () => assert.deepEqual(await defaultedErrors(obj), want));
  }

  test('volumeClaimTemplates count as volumes for mounts', async () => {
    const o = cs({ volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: {} }] });
    o.spec.template.spec.containers[0].volumeMounts = [{ name: 'data', mountPath: '/d' }];
    assert.deepEqual(await defaultedErrors(o), []);
  });

  test('v1alpha1 podsToDelete are looked up with the reader', async () => {
    const o = cs({ scaleStrategy: { podsToDelete: ['p1', 'p2', 'p3', 'p4'] } }, ALPHA);
    const c = ctx(ALPHA);
    const pods: Record<string, any> = {
      p2: { metadata: { deletionTimestamp: '2024-01-01T00:00:00Z' } },
      p3: { metadata: { ownerReferences: [{ controller: true, uid: 'other' }] } },
      p4: { metadata: { ownerReferences: [{ controller: true, uid: 'cs-uid' }] } },
    };
    c.reader = { get: async (_v, _k, name) => pods[name] ?? null, list: async () => [] };
    mutateCloneSet(o, c);
    assert.equal(
      messages(await validateCloneSet(o, undefined, c)),
      '[spec.scaleStrategy.podsToDelete: Invalid value: "p1": find pod p1 failed: pods "p1" not found, spec.scaleStrategy.podsToDelete: Invalid value: "p2": find pod p2 already terminating, spec.scaleStrategy.podsToDelete: Invalid value: "p3": find pod p3 owner is not this CloneSet]',
    );
  });
});

describe('CloneSet update rules', () => {
  test('selector is immutable', async () => {
    const old = cs();
    const obj = cs({ selector: { matchLabels: { app: 'demo', x: 'y' } } });
    obj.spec.template.metadata.labels.x = 'y';
    assert.deepEqual(await defaultedErrors(obj, 'UPDATE', old), [
      "spec: Forbidden: updates to cloneset spec for fields other than 'replicas', 'template', 'lifecycle', 'scaleStrategy', 'updateStrategy', 'minReadySeconds', 'progressDeadlineSeconds', 'volumeClaimTemplates' and 'revisionHistoryLimit' are forbidden",
    ]);
  });

  test('mutable fields may change', async () => {
    const old = cs();
    const obj = cs({
      replicas: 5,
      minReadySeconds: 3,
      volumeClaimTemplates: [{ metadata: { name: 'd' }, spec: {} }],
      scaleStrategy: { podsToDelete: ['x'] },
    });
    obj.spec.template.spec.containers[0].image = 'nginx:2';
    assert.deepEqual(await defaultedErrors(obj, 'UPDATE', old), []);
  });

  test('InPlaceOnly allows only image changes', async () => {
    const old = cs({ updateStrategy: { rollingUpdate: { podUpdatePolicy: 'InPlaceOnly' } } });
    const ok = structuredClone(old);
    ok.spec.template.spec.containers[0].image = 'nginx:2';
    assert.deepEqual(await defaultedErrors(ok, 'UPDATE', structuredClone(old)), []);
    const bad = structuredClone(old);
    bad.spec.template.spec.containers[0].env = [{ name: 'A', value: 'b' }];
    assert.deepEqual(await defaultedErrors(bad, 'UPDATE', structuredClone(old)), [
      'spec: Forbidden: only allowed to update images in spec for InPlaceOnly, but found add /containers/0/env',
    ]);
  });

  test('deletion protection', async () => {
    const gates = { ResourcesDeletionProtection: true };
    const obj = cs();
    obj.metadata.labels = { 'policy.kruise.io/delete-protection': 'Cascading' };
    await assert.rejects(
      async () => validateCloneSet(obj, obj, ctx(BETA, 'DELETE', gates)),
      (e: unknown) =>
        e instanceof AdmissionDenied &&
        e.code === 403 &&
        e.message === 'forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Cascading and replicas 3>0',
    );
    obj.spec.replicas = 0;
    assert.deepEqual(await validateCloneSet(obj, obj, ctx(BETA, 'DELETE', gates)), []);
    obj.metadata.labels['policy.kruise.io/delete-protection'] = 'Always';
    await assert.rejects(async () => validateCloneSet(obj, obj, ctx(BETA, 'DELETE', gates)), /delete-protection=Always$/);
    assert.deepEqual(await validateCloneSet(obj, obj, ctx(BETA, 'DELETE')), [], 'gate off');
  });
});
