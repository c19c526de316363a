import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import {
  CONVERSION_RESIDUAL_ANNOTATION,
  ConversionError,
  conversions,
  convert,
  type KubeObject,
} from '../../../src/apis/conversion/index.ts';
import { updateTypeToV1alpha1, updateTypeToV1beta1 } from '../../../src/apis/conversion/cloneset.ts';
import { DAEMONSET_PROGRESSIVE_CREATE_POD_ANNOTATION } from '../../../src/apis/conversion/daemonset.ts';
import { CRR_PRE_RECREATE_GRACE_CONDITION } from '../../../src/apis/conversion/containerrecreaterequest.ts';
import { UNSPECIFIED_CONDITION_REASON } from '../../../src/apis/conversion/workloadspread.ts';
import {
  CLONESET_SCALING_EXCLUDE_PREPARING_DELETE_LABEL,
  CRR_SYNC_CONTAINER_STATUSES_ANNOTATION,
  CRR_UNREADY_ACQUIRED_ANNOTATION,
  IMAGE_PREDOWNLOAD_MIN_UPDATED_READY_PODS_ANNOTATION,
  IMAGE_PREDOWNLOAD_PARALLELISM_ANNOTATION,
  IMAGE_PREDOWNLOAD_TIMEOUT_SECONDS_ANNOTATION,
  PUB_PROTECT_OPERATIONS_ANNOTATION,
  PUB_PROTECT_TOTAL_REPLICAS_ANNOTATION,
  SIDECARSET_CUSTOM_VERSION_LABEL,
} from '../../../src/apis/constants.ts';
import { kinds } from '../../../src/apis/registry.ts';
import { validateObject } from '../../../src/apis/validate.ts';

const APPS = 'apps.kruise.io';
const ALPHA = `${APPS}/v1alpha1`;
const BETA = `${APPS}/v1beta1`;

const examplesDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'examples');

function loadExamples(): KubeObject[] {
  return readdirSync(examplesDir)
    .filter((f) => f.endsWith('.yaml'))
    .flatMap((f) => parseAllDocuments(readFileSync(join(examplesDir, f), 'utf8')).map((d) => d.toJSON() as KubeObject))
    .filter((d) => d !== null);
}

function otherVersion(apiVersion: string): string {
  const [group, version] = apiVersion.split('/');
  return `${group}/${version === 'v1alpha1' ? 'v1beta1' : 'v1alpha1'}`;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

function assertValid(obj: KubeObject, what = ''): void {
  assert.deepEqual(validateObject(obj), { errors: [], unknownFields: [] }, `${what} ${JSON.stringify(obj)}`);
}

/**
 * `value` without the fields a Go client cannot tell from absent ones (false, [], {} and objects of
 * only those), which conversions do not record in the residual.
 */
function withoutZeros(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutZeros);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const w = withoutZeros(v);
    const zero =
      w === false ||
      (Array.isArray(w) && w.length === 0) ||
      (typeof w === 'object' && w !== null && !Array.isArray(w) && Object.keys(w).length === 0);
    if (!zero) out[k] = w;
  }
  return out;
}

/** Converts to the other version and back; asserts the round trip and the schema of both ends. */
function roundTrip(obj: KubeObject): KubeObject {
  const converted = convert(deepFreeze(structuredClone(obj)), otherVersion(obj.apiVersion!));
  assertValid(converted, `converted ${obj.kind}`);
  const back = convert(deepFreeze(structuredClone(converted)), obj.apiVersion!);
  assert.deepEqual(withoutZeros(back), withoutZeros(obj), `${obj.kind} ${obj.apiVersion} round trip`);
  return converted;
}

function residualOf(obj: KubeObject): unknown {
  const raw = obj.metadata?.annotations?.[CONVERSION_RESIDUAL_ANNOTATION];
  return raw === undefined ? undefined : JSON.parse(raw);
}

function servedInBoth(kind: string): boolean {
  const def = kinds.find((k) => k.kind === kind);
  return !!def && ['v1alpha1', 'v1beta1'].every((v) => def.versions.some((x) => x.name === v));
}

const podTemplate = {
  metadata: { labels: { app: 'demo' } },
  spec: { containers: [{ name: 'main', image: 'nginx:alpine' }] },
};
const selector = { matchLabels: { app: 'demo' } };

// ---------------------------------------------------------------------------------------------

describe('examples round-trip through the other version', () => {
  const examples = loadExamples().filter((o) => servedInBoth(o.kind!));
  test('every kind served in both versions has an example', () => {
    const covered = new Set(examples.map((o) => o.kind));
    assert.deepEqual(
      Object.keys(conversions).filter((k) => !covered.has(k)),
      [],
    );
  });
  for (const obj of examples) {
    test(`${obj.apiVersion} ${obj.kind} ${obj.metadata?.name}`, () => {
      roundTrip(obj);
      // and starting from the converted object, back and forth again
      roundTrip(convert(obj, otherVersion(obj.apiVersion!)));
    });
  }
});

describe('convert', () => {
  test('every kind served in both versions has a conversion, and only those', () => {
    assert.deepEqual(
      Object.keys(conversions).sort(),
      kinds
        .filter((k) => servedInBoth(k.kind))
        .map((k) => k.kind)
        .sort(),
    );
  });

  test('sets apiVersion, keeps kind and metadata, never mutates its input', () => {
    const metadata = {
      name: 'cs',
      namespace: 'ns',
      uid: 'u-1',
      resourceVersion: '42',
      generation: 3,
      creationTimestamp: '2024-01-01T00:00:00Z',
      labels: { app: 'demo' },
      annotations: { note: 'x' },
      finalizers: ['f'],
      ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'o', uid: 'o-1' }],
    };
    const input = deepFreeze({
      apiVersion: ALPHA,
      kind: 'CloneSet',
      metadata,
      spec: { selector, template: podTemplate, updateStrategy: { type: 'InPlaceOnly' } },
    });
    const out = convert(input, BETA);
    assert.equal(out.apiVersion, BETA);
    assert.equal(out.kind, 'CloneSet');
    assert.deepEqual(out.metadata, metadata);
    assert.notEqual(out.metadata, input.metadata);
  });

  test('same version returns an equal copy', () => {
    const input = { apiVersion: ALPHA, kind: 'EphemeralJob', metadata: { name: 'e' }, spec: { replicas: 1 } };
    const out = convert(input, ALPHA);
    assert.deepEqual(out, input);
    assert.notEqual(out, input);
  });

  const errors: [string, KubeObject, string, RegExp][] = [
    ['unknown kind', { apiVersion: ALPHA, kind: 'Deployment' }, BETA, /unknown kind Deployment/],
    ['foreign group', { apiVersion: 'apps/v1', kind: 'CloneSet' }, BETA, /unknown kind CloneSet in apps\/v1/],
    ['kind served in v1alpha1 only', { apiVersion: ALPHA, kind: 'EphemeralJob' }, BETA, /not served in apps.kruise.io\/v1beta1/],
    ['unknown target version', { apiVersion: ALPHA, kind: 'CloneSet' }, `${APPS}/v2`, /not served in apps.kruise.io\/v2/],
    ['unknown source version', { apiVersion: `${APPS}/v2`, kind: 'CloneSet' }, BETA, /not served in apps.kruise.io\/v2/],
    ['group change', { apiVersion: ALPHA, kind: 'CloneSet' }, 'policy.kruise.io/v1beta1', /from group apps.kruise.io/],
    ['no apiVersion', { kind: 'CloneSet' }, BETA, /no apiVersion or kind/],
    ['no kind', { apiVersion: ALPHA }, BETA, /no apiVersion or kind/],
  ];
  for (const [name, obj, to, message] of errors) {
    test(`rejects: ${name}`, () => {
      assert.throws(
        () => convert(obj, to),
        (err: unknown) => err instanceof ConversionError && message.test(err.message),
      );
    });
  }

  test('identical-schema kinds only change apiVersion', () => {
    for (const kind of ['BroadcastJob', 'AdvancedCronJob', 'ImagePullJob', 'ImageListPullJob', 'NodeImage']) {
      const obj = { apiVersion: BETA, kind, metadata: { name: 'x' }, spec: { anything: [1, { a: 'b' }] } };
      const out = convert(obj, ALPHA);
      assert.deepEqual(out, { ...obj, apiVersion: ALPHA }, kind);
    }
  });
});

// ---------------------------------------------------------------------------------------------

describe('residual annotation', () => {
  const beta: KubeObject = {
    apiVersion: BETA,
    kind: 'StatefulSet',
    metadata: { name: 'sts', namespace: 'ns' },
    spec: {
      replicas: 3,
      selector,
      template: podTemplate,
      reserveOrdinals: [1, '4-6'],
      lifecycle: { preDelete: { markPodNotReady: true } },
      scaleStrategy: { maxUnavailable: 2 },
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Retain' },
      ordinals: { start: 2 },
      volumeClaimUpdateStrategy: { type: 'OnPodRollingUpdate' },
    },
    status: {
      replicas: 3,
      readyReplicas: 3,
      availableReplicas: 3,
      currentReplicas: 3,
      updatedReplicas: 3,
      volumeClaims: [{ volumeClaimName: 'data', compatibleReplicas: 3, compatibleReadyReplicas: 3 }],
    },
  };

  test('carries what v1alpha1 cannot express and is consumed on the way back', () => {
    const alpha = roundTrip(beta);
    const spec = alpha.spec as Record<string, unknown>;
    for (const f of ['reserveOrdinals', 'lifecycle', 'scaleStrategy', 'ordinals', 'volumeClaimUpdateStrategy']) {
      assert.equal(spec[f], undefined, f);
    }
    assert.ok(residualOf(alpha));
    const back = convert(alpha, BETA);
    assert.equal(back.metadata?.annotations, undefined);
  });

  test('survives edits of other fields made in the older version', () => {
    const alpha = convert(beta, ALPHA);
    (alpha.spec as { replicas: number }).replicas = 5;
    const back = convert(alpha, BETA);
    assert.equal((back.spec as { replicas: number }).replicas, 5);
    assert.deepEqual((back.spec as { reserveOrdinals: unknown }).reserveOrdinals, [1, '4-6']);
    assert.deepEqual((back.spec as { ordinals: unknown }).ordinals, { start: 2 });
  });

  test('loses to an edit of the same field made in the other version', () => {
    const alphaCs: KubeObject = {
      apiVersion: BETA,
      kind: 'CloneSet',
      metadata: { name: 'cs' },
      spec: { selector, template: podTemplate, updateStrategy: { type: 'RollingUpdate' } },
    };
    const alpha = convert(alphaCs, ALPHA);
    assert.deepEqual(alpha.spec?.updateStrategy, { type: 'ReCreate' });
    // unchanged: the v1beta1 form (type only, no rollingUpdate) comes back exactly
    assert.deepEqual(convert(alpha, BETA), alphaCs);
    // changed in v1alpha1: the residual no longer applies and the edit wins
    (alpha.spec as { updateStrategy: { type: string } }).updateStrategy.type = 'InPlaceIfPossible';
    assert.deepEqual(convert(alpha, BETA).spec?.updateStrategy, {
      type: 'RollingUpdate',
      rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible' },
    });
  });

  test('an unreadable residual is dropped', () => {
    const alpha = convert(beta, ALPHA);
    alpha.metadata!.annotations![CONVERSION_RESIDUAL_ANNOTATION] = '{not json';
    const back = convert(alpha, BETA);
    assert.equal((back.spec as { reserveOrdinals?: unknown }).reserveOrdinals, undefined);
    assertValid(back);
  });

  test('objects whose fields all have a home carry no residual', () => {
    const alpha: KubeObject = {
      apiVersion: ALPHA,
      kind: 'CloneSet',
      metadata: { name: 'cs' },
      spec: { selector, template: podTemplate, updateStrategy: { type: 'InPlaceIfPossible', partition: 1 } },
    };
    assert.equal(residualOf(roundTrip(alpha)), undefined);
  });

  // What the apiserver stores after defaulting, and what Go clients send (empty structs as {}).
  const defaultedBeta: KubeObject = {
    apiVersion: BETA,
    kind: 'CloneSet',
    metadata: { name: 'cs', namespace: 'ns' },
    spec: {
      replicas: 2,
      selector,
      template: podTemplate,
      revisionHistoryLimit: 10,
      scaleStrategy: {},
      updateStrategy: {
        type: 'RollingUpdate',
        rollingUpdate: {
          podUpdatePolicy: 'InPlaceIfPossible',
          inPlaceUpdateStrategy: {},
          partition: 0,
          maxUnavailable: '20%',
          maxSurge: 0,
        },
      },
    },
    status: {
      replicas: 0,
      readyReplicas: 0,
      availableReplicas: 0,
      updatedReplicas: 0,
      updatedReadyReplicas: 0,
      expectedUpdatedReplicas: 2,
      observedGeneration: 1,
      conditions: [],
    },
  };

  test('a v1beta1 object read as v1beta1 never gains one', () => {
    assert.equal(residualOf(convert(defaultedBeta, BETA)), undefined);
  });

  test('defaulted objects read in the other version carry none', () => {
    const explicitOff = structuredClone(defaultedBeta);
    (explicitOff.spec as { scaleStrategy: unknown }).scaleStrategy = { enablePVCReuse: false };
    for (const obj of [defaultedBeta, explicitOff]) {
      const alpha = roundTrip(obj);
      assert.equal(alpha.metadata?.annotations, undefined, JSON.stringify(alpha.metadata));
    }
    const defaultedAlpha: KubeObject = {
      apiVersion: ALPHA,
      kind: 'CloneSet',
      metadata: { name: 'cs', namespace: 'ns' },
      spec: {
        replicas: 2,
        selector,
        template: podTemplate,
        scaleStrategy: { disablePVCReuse: false },
        updateStrategy: { type: 'InPlaceOnly', inPlaceUpdateStrategy: {}, partition: 0, maxUnavailable: '20%', maxSurge: 0 },
      },
    };
    assert.equal(roundTrip(defaultedAlpha).metadata?.annotations, undefined);
  });

  test('a v1alpha1 write read as v1beta1 carries one only for data v1beta1 cannot hold', () => {
    const alpha = convert(beta, ALPHA);
    const stored = convert(alpha, BETA);
    assert.equal(residualOf(stored), undefined);
    // an integer partition has a home in both versions (a percentage has none in v1alpha1)
    const ds: KubeObject = {
      apiVersion: BETA,
      kind: 'DaemonSet',
      metadata: { name: 'ds' },
      spec: { selector, template: podTemplate, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 3 } } },
    };
    assert.equal(residualOf(roundTrip(ds)), undefined);
  });
});

// ---------------------------------------------------------------------------------------------

describe('CloneSet', () => {
  const alpha: KubeObject = {
    apiVersion: ALPHA,
    kind: 'CloneSet',
    metadata: {
      name: 'cs',
      namespace: 'ns',
      labels: { app: 'demo', [CLONESET_SCALING_EXCLUDE_PREPARING_DELETE_LABEL]: 'true' },
      annotations: {
        [IMAGE_PREDOWNLOAD_PARALLELISM_ANNOTATION]: '50%',
        [IMAGE_PREDOWNLOAD_TIMEOUT_SECONDS_ANNOTATION]: '600',
        [IMAGE_PREDOWNLOAD_MIN_UPDATED_READY_PODS_ANNOTATION]: '2',
      },
    },
    spec: {
      replicas: 4,
      selector,
      template: podTemplate,
      volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'] } }],
      revisionHistoryLimit: 5,
      minReadySeconds: 3,
      progressDeadlineSeconds: 600,
      lifecycle: { preDelete: { finalizersHandler: ['example.io/block'] } },
      scaleStrategy: { podsToDelete: ['cs-abcde'], maxUnavailable: 1, disablePVCReuse: true },
      updateStrategy: {
        type: 'InPlaceIfPossible',
        partition: '25%',
        maxUnavailable: '20%',
        maxSurge: 1,
        paused: true,
        priorityStrategy: { weightPriority: [{ weight: 50, matchSelector: { matchLabels: { tier: 'a' } } }] },
        scatterStrategy: [{ key: 'zone', value: 'a' }],
        inPlaceUpdateStrategy: { gracePeriodSeconds: 10 },
      },
    },
    status: {
      observedGeneration: 2,
      replicas: 4,
      readyReplicas: 4,
      availableReplicas: 4,
      updatedReplicas: 1,
      updatedReadyReplicas: 1,
      updatedAvailableReplicas: 1,
      expectedUpdatedReplicas: 3,
      updateRevision: 'cs-2',
      currentRevision: 'cs-1',
      collisionCount: 0,
      labelSelector: 'app=demo',
      conditions: [{ type: 'FailedScale', status: 'False', lastUpdateTime: '2024-01-01T00:00:00Z' }],
    },
  };

  test('v1alpha1 → v1beta1 maps every field and round-trips without residual', () => {
    const beta = roundTrip(alpha);
    assert.equal(residualOf(beta), undefined);
    assert.deepEqual(beta.metadata, { name: 'cs', namespace: 'ns', labels: { app: 'demo' } });
    assert.deepEqual(beta.spec?.scaleStrategy, { podsToDelete: ['cs-abcde'], maxUnavailable: 1, excludePreparingDelete: true });
    assert.deepEqual(beta.spec?.updateStrategy, {
      type: 'RollingUpdate',
      rollingUpdate: {
        partition: '25%',
        maxUnavailable: '20%',
        maxSurge: 1,
        paused: true,
        priorityStrategy: { weightPriority: [{ weight: 50, matchSelector: { matchLabels: { tier: 'a' } } }] },
        scatterStrategy: [{ key: 'zone', value: 'a' }],
        podUpdatePolicy: 'InPlaceIfPossible',
        inPlaceUpdateStrategy: {
          gracePeriodSeconds: 10,
          imagePreDownloadParallelism: '50%',
          imagePreDownloadTimeoutSeconds: 600,
          imagePreDownloadMinUpdatedReadyPods: 2,
        },
      },
    });
    assert.deepEqual(beta.status, alpha.status);
  });

  test('v1alpha1 OnDelete ↔ v1beta1 type OnDelete', () => {
    const a: KubeObject = {
      apiVersion: ALPHA,
      kind: 'CloneSet',
      metadata: { name: 'c' },
      spec: { selector, template: podTemplate, updateStrategy: { type: 'OnDelete', partition: 2 } },
    };
    const b = roundTrip(a);
    assert.deepEqual(b.spec?.updateStrategy, { type: 'OnDelete', rollingUpdate: { partition: 2 } });
  });

  const typeTable: [string | undefined, { type?: string; podUpdatePolicy?: string }][] = [
    [undefined, {}],
    ['ReCreate', { type: 'RollingUpdate', podUpdatePolicy: 'ReCreate' }],
    ['InPlaceIfPossible', { type: 'RollingUpdate', podUpdatePolicy: 'InPlaceIfPossible' }],
    ['InPlaceOnly', { type: 'RollingUpdate', podUpdatePolicy: 'InPlaceOnly' }],
    ['OnDelete', { type: 'OnDelete' }],
    ['Bogus', { type: 'RollingUpdate', podUpdatePolicy: 'ReCreate' }],
  ];
  for (const [alphaType, beta] of typeTable) {
    test(`updateStrategy.type ${alphaType} → v1beta1 ${JSON.stringify(beta)}`, () => {
      assert.deepEqual(updateTypeToV1beta1(alphaType), beta);
    });
  }

  const reverseTypeTable: [string | undefined, string | undefined, string | undefined][] = [
    [undefined, undefined, undefined],
    ['RollingUpdate', undefined, 'ReCreate'],
    ['RollingUpdate', 'InPlaceOnly', 'InPlaceOnly'],
    [undefined, 'InPlaceIfPossible', 'InPlaceIfPossible'],
    ['OnDelete', 'InPlaceIfPossible', 'OnDelete'],
    ['RollingUpdate', 'Bogus', 'ReCreate'],
  ];
  for (const [type, policy, alphaType] of reverseTypeTable) {
    test(`v1beta1 type ${type} + podUpdatePolicy ${policy} → v1alpha1 ${alphaType}`, () => {
      assert.equal(updateTypeToV1alpha1(type, policy), alphaType);
    });
  }

  const pvcTable: [boolean | undefined, boolean | undefined][] = [
    [undefined, true],
    [false, true],
    [true, undefined],
  ];
  for (const [disable, enable] of pvcTable) {
    test(`scaleStrategy.disablePVCReuse ${disable} → enablePVCReuse ${enable}`, () => {
      const a: KubeObject = {
        apiVersion: ALPHA,
        kind: 'CloneSet',
        metadata: { name: 'c' },
        spec: { selector, template: podTemplate, scaleStrategy: disable === undefined ? {} : { disablePVCReuse: disable } },
      };
      const b = roundTrip(a);
      assert.equal((b.spec?.scaleStrategy as { enablePVCReuse?: boolean } | undefined)?.enablePVCReuse, enable);
    });
  }
  // The mapping is its own inverse, so the same table reads the other way.
  for (const [enable, disable] of pvcTable) {
    test(`scaleStrategy.enablePVCReuse ${enable} → disablePVCReuse ${disable}`, () => {
      const b: KubeObject = {
        apiVersion: BETA,
        kind: 'CloneSet',
        metadata: { name: 'c' },
        spec: { selector, template: podTemplate, scaleStrategy: enable === undefined ? {} : { enablePVCReuse: enable } },
      };
      const a = roundTrip(b);
      assert.equal((a.spec?.scaleStrategy as { disablePVCReuse?: boolean } | undefined)?.disablePVCReuse, disable);
    });
  }

  const labelTable: [string | undefined, boolean | undefined, boolean][] = [
    ['true', true, false],
    ['false', undefined, true],
    [undefined, undefined, false],
  ];
  for (const [label, field, labelKept] of labelTable) {
    test(`exclude-preparing-delete label ${label} → scaleStrategy.excludePreparingDelete ${field}`, () => {
      const labels = label === undefined ? undefined : { [CLONESET_SCALING_EXCLUDE_PREPARING_DELETE_LABEL]: label };
      const a: KubeObject = {
        apiVersion: ALPHA,
        kind: 'CloneSet',
        metadata: { name: 'c', labels },
        spec: { selector, template: podTemplate },
      };
      const b = roundTrip(a);
      assert.equal((b.spec?.scaleStrategy as { excludePreparingDelete?: boolean }).excludePreparingDelete, field);
      assert.equal(b.metadata?.labels?.[CLONESET_SCALING_EXCLUDE_PREPARING_DELETE_LABEL] !== undefined, labelKept);
    });
  }

  test('v1beta1 excludePreparingDelete and pre-download fields → v1alpha1 label and annotations', () => {
    const b: KubeObject = {
      apiVersion: BETA,
      kind: 'CloneSet',
      metadata: { name: 'c' },
      spec: {
        selector,
        template: podTemplate,
        scaleStrategy: { enablePVCReuse: true, excludePreparingDelete: true },
        updateStrategy: {
          rollingUpdate: {
            inPlaceUpdateStrategy: {
              imagePreDownloadParallelism: 3,
              imagePreDownloadTimeoutSeconds: 100,
              imagePreDownloadMinUpdatedReadyPods: 1,
            },
          },
        },
      },
    };
    const a = roundTrip(b);
    assert.deepEqual(a.metadata, {
      name: 'c',
      labels: { [CLONESET_SCALING_EXCLUDE_PREPARING_DELETE_LABEL]: 'true' },
      annotations: {
        [IMAGE_PREDOWNLOAD_PARALLELISM_ANNOTATION]: '3',
        [IMAGE_PREDOWNLOAD_TIMEOUT_SECONDS_ANNOTATION]: '100',
        [IMAGE_PREDOWNLOAD_MIN_UPDATED_READY_PODS_ANNOTATION]: '1',
      },
    });
    assert.deepEqual(a.spec?.updateStrategy, {});
    assert.equal(a.spec?.scaleStrategy, undefined);
  });

  const annotationTable: [string, string, string, unknown, boolean][] = [
    ['parallelism int', IMAGE_PREDOWNLOAD_PARALLELISM_ANNOTATION, '3', { imagePreDownloadParallelism: 3 }, false],
    ['parallelism percent', IMAGE_PREDOWNLOAD_PARALLELISM_ANNOTATION, '10%', { imagePreDownloadParallelism: '10%' }, false],
    ['timeout', IMAGE_PREDOWNLOAD_TIMEOUT_SECONDS_ANNOTATION, '300', { imagePreDownloadTimeoutSeconds: 300 }, false],
    ['timeout not a number', IMAGE_PREDOWNLOAD_TIMEOUT_SECONDS_ANNOTATION, 'soon', undefined, true],
    ['min pods overflowing int32', IMAGE_PREDOWNLOAD_MIN_UPDATED_READY_PODS_ANNOTATION, '9999999999', undefined, true],
    ['empty value', IMAGE_PREDOWNLOAD_MIN_UPDATED_READY_PODS_ANNOTATION, '', undefined, true],
  ];
  for (const [name, key, value, inPlace, kept] of annotationTable) {
    test(`pre-download annotation: ${name}`, () => {
      const a: KubeObject = {
        apiVersion: ALPHA,
        kind: 'CloneSet',
        metadata: { name: 'c', annotations: { [key]: value } },
        spec: { selector, template: podTemplate },
      };
      const b = roundTrip(a);
      const rollingUpdate = (b.spec?.updateStrategy as { rollingUpdate?: { inPlaceUpdateStrategy?: unknown } } | undefined)?.rollingUpdate;
      assert.deepEqual(rollingUpdate?.inPlaceUpdateStrategy, inPlace);
      assert.equal(b.metadata?.annotations?.[key] !== undefined, kept);
    });
  }

  test('a pre-download annotation wins over the v1alpha1 field of the same meaning', () => {
    const a: KubeObject = {
      apiVersion: ALPHA,
      kind: 'CloneSet',
      metadata: { name: 'c', annotations: { [IMAGE_PREDOWNLOAD_TIMEOUT_SECONDS_ANNOTATION]: '30' } },
      spec: {
        selector,
        template: podTemplate,
        updateStrategy: { inPlaceUpdateStrategy: { imagePreDownloadTimeoutSeconds: 99, imagePreDownloadMinUpdatedReadyPods: 4 } },
      },
    };
    const b = roundTrip(a);
    assert.deepEqual(b.spec?.updateStrategy, {
      rollingUpdate: { inPlaceUpdateStrategy: { imagePreDownloadTimeoutSeconds: 30, imagePreDownloadMinUpdatedReadyPods: 4 } },
    });
  });
});

// ---------------------------------------------------------------------------------------------

describe('StatefulSet', () => {
  test('v1alpha1 status without availableReplicas gets 0 in v1beta1', () => {
    const a: KubeObject = {
      apiVersion: ALPHA,
      kind: 'StatefulSet',
      metadata: { name: 's' },
      spec: {
        selector,
        template: podTemplate,
        updateStrategy: {
          type: 'RollingUpdate',
          rollingUpdate: {
            partition: 1,
            podUpdatePolicy: 'InPlaceIfPossible',
            unorderedUpdate: { priorityStrategy: { orderPriority: [{ orderedKey: 'k' }] } },
            inPlaceUpdateStrategy: { gracePeriodSeconds: 5 },
            minReadySeconds: 10,
          },
        },
      },
      status: { replicas: 1, readyReplicas: 1, currentReplicas: 1, updatedReplicas: 1 },
    };
    const b = roundTrip(a);
    assert.equal((b.status as { availableReplicas: number }).availableReplicas, 0);
    assert.deepEqual(b.spec, a.spec);
  });
});

describe('DaemonSet', () => {
  const alpha: KubeObject = {
    apiVersion: ALPHA,
    kind: 'DaemonSet',
    metadata: { name: 'd', annotations: { [DAEMONSET_PROGRESSIVE_CREATE_POD_ANNOTATION]: 'true' } },
    spec: {
      selector,
      template: podTemplate,
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { rollingUpdateType: 'Surging', maxSurge: '10%', partition: 3 } },
    },
    status: {
      currentNumberScheduled: 2,
      numberMisscheduled: 0,
      desiredNumberScheduled: 2,
      numberReady: 2,
      updatedNumberScheduled: 1,
      daemonSetHash: 'd-123',
    },
  };

  test('Surging → Standard with maxSurge, annotation → partitionedScaling, daemonSetHash → updateRevision', () => {
    const b = roundTrip(alpha);
    assert.deepEqual(b.spec?.updateStrategy, {
      type: 'RollingUpdate',
      rollingUpdate: { rollingUpdateType: 'Standard', maxSurge: '10%', partition: 3 },
    });
    assert.deepEqual(b.spec?.scaleStrategy, { partitionedScaling: true });
    assert.equal(b.metadata?.annotations?.[DAEMONSET_PROGRESSIVE_CREATE_POD_ANNOTATION], undefined);
    assert.equal((b.status as { updateRevision: string }).updateRevision, 'd-123');
    assert.equal((b.status as { daemonSetHash?: string }).daemonSetHash, undefined);
  });

  test('v1beta1 partitionedScaling, percent partition and updateRevision → v1alpha1', () => {
    const b: KubeObject = {
      apiVersion: BETA,
      kind: 'DaemonSet',
      metadata: { name: 'd' },
      spec: {
        selector,
        template: podTemplate,
        updateStrategy: { rollingUpdate: { partition: '30%' } },
        scaleStrategy: { partitionedScaling: true },
      },
      status: {
        currentNumberScheduled: 1,
        numberMisscheduled: 0,
        desiredNumberScheduled: 1,
        numberReady: 1,
        updatedNumberScheduled: 1,
        updateRevision: 'd-9',
      },
    };
    const a = roundTrip(b);
    assert.equal(a.metadata?.annotations?.[DAEMONSET_PROGRESSIVE_CREATE_POD_ANNOTATION], 'true');
    assert.deepEqual(a.spec?.updateStrategy, { rollingUpdate: {} });
    assert.equal(a.spec?.scaleStrategy, undefined);
    assert.equal((a.status as { daemonSetHash: string }).daemonSetHash, 'd-9');
  });
});

describe('SidecarSet', () => {
  const sidecar = {
    name: 'sidecar',
    image: 'busybox',
    podInjectPolicy: 'AfterAppContainer',
    upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'empty' },
  };

  test('spec.namespace → namespaceSelector on kubernetes.io/metadata.name; label → customVersion', () => {
    const a: KubeObject = {
      apiVersion: ALPHA,
      kind: 'SidecarSet',
      metadata: { name: 's', labels: { [SIDECARSET_CUSTOM_VERSION_LABEL]: 'v2', team: 'x' } },
      spec: { namespace: 'ns-1', selector, containers: [sidecar] },
    };
    const b = roundTrip(a);
    assert.deepEqual(b.spec?.namespaceSelector, { matchLabels: { 'kubernetes.io/metadata.name': 'ns-1' } });
    assert.equal(b.spec?.namespace, undefined);
    assert.equal(b.spec?.customVersion, 'v2');
    assert.deepEqual(b.metadata?.labels, { team: 'x' });
  });

  test('spec.namespace takes precedence over a v1alpha1 namespaceSelector', () => {
    const a: KubeObject = {
      apiVersion: ALPHA,
      kind: 'SidecarSet',
      metadata: { name: 's' },
      spec: { namespace: 'ns-1', namespaceSelector: { matchLabels: { env: 'prod' } }, containers: [sidecar] },
    };
    const b = roundTrip(a);
    assert.deepEqual(b.spec?.namespaceSelector, { matchLabels: { 'kubernetes.io/metadata.name': 'ns-1' } });
  });

  test('v1beta1 customVersion → v1alpha1 label; namespaceSelector kept', () => {
    const b: KubeObject = {
      apiVersion: BETA,
      kind: 'SidecarSet',
      metadata: { name: 's' },
      spec: { customVersion: 'canary', namespaceSelector: { matchLabels: { env: 'prod' } }, containers: [sidecar] },
    };
    const a = roundTrip(b);
    assert.deepEqual(a.metadata?.labels, { [SIDECARSET_CUSTOM_VERSION_LABEL]: 'canary' });
    assert.deepEqual(a.spec, { namespaceSelector: { matchLabels: { env: 'prod' } }, containers: [sidecar] });
    assert.equal(residualOf(a), undefined);
  });
});

describe('UnitedDeployment', () => {
  const alpha: KubeObject = {
    apiVersion: ALPHA,
    kind: 'UnitedDeployment',
    metadata: { name: 'ud' },
    spec: {
      replicas: 4,
      selector,
      template: {
        cloneSetTemplate: {
          metadata: { labels: { app: 'demo', [CLONESET_SCALING_EXCLUDE_PREPARING_DELETE_LABEL]: 'true' } },
          spec: { selector, template: podTemplate, updateStrategy: { type: 'InPlaceOnly', maxSurge: 1 } },
        },
      },
      topology: { subsets: [{ name: 'a', replicas: 1 }, { name: 'b' }] },
      updateStrategy: { type: 'Manual', manualUpdate: { partitions: { a: 1 } } },
    },
    status: {
      replicas: 4,
      updatedReplicas: 2,
      currentRevision: 'ud-1',
      subsetReplicas: { a: 1, b: 3 },
      updateStatus: { updatedRevision: 'ud-2', currentPartitions: { a: 1, b: 0 } },
      // OpenKruise v1.8.2 leaves a v1alpha1 entry's replicas and partition unset (the maps hold them).
      subsetStatuses: [
        { name: 'a', readyReplicas: 1 },
        { name: 'b', readyReplicas: 2 },
      ],
    },
  };

  test('status.subsetReplicas / updateStatus ↔ updatedRevision + per-subset replicas and partition', () => {
    const b = roundTrip(alpha);
    assert.equal(residualOf(b), undefined);
    assert.deepEqual(b.status, {
      replicas: 4,
      updatedReplicas: 2,
      currentRevision: 'ud-1',
      updatedRevision: 'ud-2',
      subsetStatuses: [
        { name: 'a', replicas: 1, readyReplicas: 1, partition: 1 },
        { name: 'b', replicas: 3, readyReplicas: 2, partition: 0 },
      ],
    });
  });

  test('subset entries missing from v1alpha1 subsetStatuses are created', () => {
    const a = structuredClone(alpha);
    delete (a.status as { subsetStatuses?: unknown }).subsetStatuses;
    const b = roundTrip(a);
    assert.deepEqual((b.status as { subsetStatuses: unknown }).subsetStatuses, [
      { name: 'a', replicas: 1, partition: 1 },
      { name: 'b', replicas: 3, partition: 0 },
    ]);
  });

  test('cloneSetTemplate is converted as a CloneSet, with the template metadata', () => {
    const b = roundTrip(alpha);
    const t = (b.spec as { template: { cloneSetTemplate: KubeObject } }).template.cloneSetTemplate;
    assert.deepEqual(t.metadata, { labels: { app: 'demo' } });
    assert.deepEqual(t.spec, {
      selector,
      template: podTemplate,
      scaleStrategy: { enablePVCReuse: true, excludePreparingDelete: true },
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, podUpdatePolicy: 'InPlaceOnly' } },
    });
  });

  test('v1beta1 status → v1alpha1 subsetReplicas and updateStatus', () => {
    const b: KubeObject = {
      apiVersion: BETA,
      kind: 'UnitedDeployment',
      metadata: { name: 'ud' },
      spec: { selector },
      status: {
        replicas: 2,
        updatedReplicas: 2,
        currentRevision: 'r1',
        updatedRevision: 'r2',
        subsetStatuses: [{ name: 'x', replicas: 2, partition: 1 }, { name: 'y' }],
      },
    };
    const a = roundTrip(b);
    const status = a.status as Record<string, unknown>;
    assert.deepEqual(status.subsetReplicas, { x: 2, y: 0 });
    assert.deepEqual(status.updateStatus, { updatedRevision: 'r2', currentPartitions: { x: 1, y: 0 } });
    assert.deepEqual(status.subsetStatuses, [{ name: 'x' }, { name: 'y' }]);
  });
});

describe('WorkloadSpread', () => {
  test('subset node selectors are renamed; conditions become metav1.Condition', () => {
    const a: KubeObject = {
      apiVersion: ALPHA,
      kind: 'WorkloadSpread',
      metadata: { name: 'ws', creationTimestamp: '2024-05-01T00:00:00Z' },
      spec: {
        targetRef: { apiVersion: BETA, kind: 'CloneSet', name: 'cs' },
        subsets: [
          {
            name: 'a',
            requiredNodeSelectorTerm: { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] },
            preferredNodeSelectorTerms: [{ weight: 10, preference: { matchExpressions: [{ key: 'x', operator: 'Exists' }] } }],
            maxReplicas: 3,
          },
        ],
      },
      status: {
        subsetStatuses: [{ name: 'a', replicas: 1, missingReplicas: 2, conditions: [{ type: 'Schedulable', status: 'True' }] }],
        versionedSubsetStatuses: {
          v1: [
            {
              name: 'a',
              replicas: 1,
              missingReplicas: 2,
              conditions: [
                {
                  type: 'Schedulable',
                  status: 'False',
                  reason: 'PodUnschedulable',
                  message: 'm',
                  lastTransitionTime: '2024-06-01T00:00:00Z',
                },
              ],
            },
          ],
        },
      },
    };
    const b = roundTrip(a);
    const subset = (b.spec as { subsets: Record<string, unknown>[] }).subsets[0];
    assert.deepEqual(Object.keys(subset).sort(), ['maxReplicas', 'name', 'preferredNodeSelector', 'requiredNodeSelector']);
    const status = b.status as {
      subsetStatuses: { conditions: unknown[] }[];
      versionedSubsetStatuses: Record<string, { conditions: unknown[] }[]>;
    };
    assert.deepEqual(status.subsetStatuses[0].conditions, [
      {
        type: 'Schedulable',
        status: 'True',
        lastTransitionTime: '2024-05-01T00:00:00Z',
        reason: UNSPECIFIED_CONDITION_REASON,
        message: '',
      },
    ]);
    assert.deepEqual(
      status.versionedSubsetStatuses.v1[0].conditions,
      a.status && (a.status as typeof status).versionedSubsetStatuses.v1[0].conditions,
    );
  });

  test('v1beta1 condition observedGeneration has no v1alpha1 form', () => {
    const b: KubeObject = {
      apiVersion: BETA,
      kind: 'WorkloadSpread',
      metadata: { name: 'ws' },
      spec: {
        targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'd' },
        subsets: [{ name: 'a', requiredNodeSelector: { matchFields: [] } }],
      },
      status: {
        subsetStatuses: [
          {
            name: 'a',
            replicas: 0,
            missingReplicas: -1,
            conditions: [
              {
                type: 'Schedulable',
                status: 'True',
                observedGeneration: 3,
                lastTransitionTime: '2024-01-01T00:00:00Z',
                reason: 'Sufficient',
                message: '',
              },
            ],
          },
        ],
      },
    };
    const a = roundTrip(b);
    const cond = (a.status as { subsetStatuses: { conditions: Record<string, unknown>[] }[] }).subsetStatuses[0].conditions[0];
    assert.equal(cond.observedGeneration, undefined);
    assert.deepEqual((a.spec as { subsets: unknown[] }).subsets, [{ name: 'a', requiredNodeSelectorTerm: { matchFields: [] } }]);
  });

  test("the hub's stand-in reason and an empty message read as v1.8.2's none at v1alpha1, and come back", () => {
    const condition = {
      type: 'Schedulable',
      status: 'True',
      lastTransitionTime: '2024-01-01T00:00:00Z',
      reason: 'Unspecified',
      message: '',
    };
    const b: KubeObject = {
      apiVersion: BETA,
      kind: 'WorkloadSpread',
      metadata: { name: 'ws' },
      spec: { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'd' }, subsets: [{ name: 'a' }] },
      status: { subsetStatuses: [{ name: 'a', replicas: 0, missingReplicas: -1, conditions: [condition] }] },
    };
    const a = convert(b, ALPHA);
    const conditionsOf = (o: KubeObject) => (o.status as { subsetStatuses: { conditions: unknown[] }[] }).subsetStatuses[0]!.conditions;
    assert.deepEqual(conditionsOf(a), [{ type: 'Schedulable', status: 'True', lastTransitionTime: '2024-01-01T00:00:00Z' }]);
    assert.equal(a.metadata?.annotations, undefined, 'nothing lost: no residual annotation');
    assert.deepEqual(conditionsOf(convert(a, BETA)), [condition]);
  });
});

describe('ResourceDistribution', () => {
  test('namespaceLabelSelector ↔ namespaceSelector, failedNamespace ↔ failedNamespaces', () => {
    const a: KubeObject = {
      apiVersion: ALPHA,
      kind: 'ResourceDistribution',
      metadata: { name: 'rd' },
      spec: {
        resource: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' }, data: { k: 'v' } },
        targets: { includedNamespaces: { list: [{ name: 'a' }] }, namespaceLabelSelector: { matchLabels: { env: 'p' } } },
      },
      status: {
        desired: 2,
        succeeded: 1,
        failed: 1,
        conditions: [{ type: 'CreateResourceFailed', status: 'True', failedNamespace: ['b'] }],
      },
    };
    const b = roundTrip(a);
    assert.deepEqual((b.spec as { targets: unknown }).targets, {
      includedNamespaces: { list: [{ name: 'a' }] },
      namespaceSelector: { matchLabels: { env: 'p' } },
    });
    assert.deepEqual((b.status as { conditions: unknown[] }).conditions, [
      { type: 'CreateResourceFailed', status: 'True', failedNamespaces: ['b'] },
    ]);
  });
});

describe('PersistentPodState', () => {
  test('nodeTopologyKeys ↔ keys in required and preferred terms', () => {
    const a: KubeObject = {
      apiVersion: ALPHA,
      kind: 'PersistentPodState',
      metadata: { name: 'p' },
      spec: {
        targetRef: { apiVersion: BETA, kind: 'StatefulSet', name: 's' },
        requiredPersistentTopology: { nodeTopologyKeys: ['zone'] },
        preferredPersistentTopology: [{ weight: 100, preference: { nodeTopologyKeys: ['host'] } }],
      },
      status: { observedGeneration: 1 },
    };
    const b = roundTrip(a);
    const spec = b.spec as { requiredPersistentTopology: unknown; preferredPersistentTopology: unknown };
    assert.deepEqual(spec.requiredPersistentTopology, { keys: ['zone'] });
    assert.deepEqual(spec.preferredPersistentTopology, [{ weight: 100, preference: { keys: ['host'] } }]);
  });
});

describe('ContainerRecreateRequest', () => {
  const spec = {
    podName: 'pod',
    containers: [{ name: 'app', statusContext: { containerID: 'containerd://1', restartCount: 0 } }],
    strategy: { unreadyGracePeriodSeconds: 3 },
  };
  const snapshot = [
    { name: 'app', ready: true, restartCount: 1, containerID: 'containerd://2' },
    { name: 'sidecar', ready: false, restartCount: 0 },
  ];

  test('annotations → status.containerStatusSnapshot and PreRecreateGrace condition', () => {
    const a: KubeObject = {
      apiVersion: ALPHA,
      kind: 'ContainerRecreateRequest',
      metadata: {
        name: 'crr',
        annotations: {
          [CRR_SYNC_CONTAINER_STATUSES_ANNOTATION]: JSON.stringify(snapshot),
          [CRR_UNREADY_ACQUIRED_ANNOTATION]: '2024-03-01T10:00:00Z',
        },
      },
      spec,
      status: { phase: 'Recreating' },
    };
    const b = roundTrip(a);
    assert.equal(b.metadata?.annotations, undefined);
    const status = b.status as { containerStatusSnapshot: unknown; conditions: Record<string, unknown>[] };
    assert.deepEqual(status.containerStatusSnapshot, snapshot);
    assert.equal(status.conditions.length, 1);
    assert.equal(status.conditions[0].type, CRR_PRE_RECREATE_GRACE_CONDITION);
    assert.equal(status.conditions[0].status, 'True');
    assert.equal(status.conditions[0].lastTransitionTime, '2024-03-01T10:00:00Z');
  });

  test('a v1beta1 PreRecreateGrace=True condition is shown as the unready-acquired annotation', () => {
    const b: KubeObject = {
      apiVersion: BETA,
      kind: 'ContainerRecreateRequest',
      metadata: { name: 'crr', finalizers: ['crr.apps.kruise.io/unready-acquired'] },
      spec,
      status: {
        phase: 'Recreating',
        containerStatusSnapshot: snapshot,
        conditions: [
          {
            type: CRR_PRE_RECREATE_GRACE_CONDITION,
            status: 'True',
            lastTransitionTime: '2024-03-01T10:00:00Z',
            reason: 'Acquired',
            message: 'held',
          },
        ],
      },
    };
    const a = roundTrip(b);
    assert.deepEqual(a.metadata?.annotations?.[CRR_UNREADY_ACQUIRED_ANNOTATION], '2024-03-01T10:00:00Z');
    assert.deepEqual(JSON.parse(a.metadata!.annotations![CRR_SYNC_CONTAINER_STATUSES_ANNOTATION]), snapshot);
    assert.deepEqual(a.status, { phase: 'Recreating' });
    assert.deepEqual(a.metadata?.finalizers, ['crr.apps.kruise.io/unready-acquired']);
  });

  test('a False PreRecreateGrace condition writes no annotation', () => {
    const b: KubeObject = {
      apiVersion: BETA,
      kind: 'ContainerRecreateRequest',
      metadata: { name: 'crr' },
      spec,
      status: {
        phase: 'Recreating',
        conditions: [
          { type: CRR_PRE_RECREATE_GRACE_CONDITION, status: 'False', lastTransitionTime: '2024-03-01T10:00:00Z', reason: 'R', message: '' },
        ],
      },
    };
    const a = roundTrip(b);
    assert.equal(a.metadata?.annotations?.[CRR_UNREADY_ACQUIRED_ANNOTATION], undefined);
  });

  const unmapped: [string, Record<string, string>, Record<string, unknown> | undefined][] = [
    ['statuses annotation not JSON', { [CRR_SYNC_CONTAINER_STATUSES_ANNOTATION]: '[{' }, { phase: 'Pending' }],
    ['unready-acquired not a time', { [CRR_UNREADY_ACQUIRED_ANNOTATION]: 'yes' }, { phase: 'Pending' }],
    [
      'no status to hold them',
      { [CRR_SYNC_CONTAINER_STATUSES_ANNOTATION]: '[]', [CRR_UNREADY_ACQUIRED_ANNOTATION]: '2024-03-01T10:00:00Z' },
      undefined,
    ],
  ];
  for (const [name, annotations, status] of unmapped) {
    test(`annotations stay when they cannot be mapped: ${name}`, () => {
      const a: KubeObject = {
        apiVersion: ALPHA,
        kind: 'ContainerRecreateRequest',
        metadata: { name: 'crr', annotations },
        spec,
        ...(status ? { status } : {}),
      };
      const b = roundTrip(a);
      assert.deepEqual(b.metadata?.annotations, annotations);
    });
  }
});

describe('PodUnavailableBudget', () => {
  const POLICY_ALPHA = 'policy.kruise.io/v1alpha1';
  const POLICY_BETA = 'policy.kruise.io/v1beta1';

  const table: [string, Record<string, string>, Record<string, unknown>, Record<string, string> | undefined][] = [
    [
      'both annotations',
      { [PUB_PROTECT_OPERATIONS_ANNOTATION]: 'DELETE,EVICT', [PUB_PROTECT_TOTAL_REPLICAS_ANNOTATION]: '5' },
      { protectOperations: ['DELETE', 'EVICT'], protectTotalReplicas: 5 },
      undefined,
    ],
    [
      'operations list with blanks',
      { [PUB_PROTECT_OPERATIONS_ANNOTATION]: ' UPDATE, ,EVICT ' },
      { protectOperations: ['UPDATE', 'EVICT'] },
      undefined,
    ],
    [
      'invalid total stays an annotation',
      { [PUB_PROTECT_TOTAL_REPLICAS_ANNOTATION]: 'five' },
      {},
      { [PUB_PROTECT_TOTAL_REPLICAS_ANNOTATION]: 'five' },
    ],
    [
      'empty operations list stays an annotation',
      { [PUB_PROTECT_OPERATIONS_ANNOTATION]: ' , ' },
      {},
      { [PUB_PROTECT_OPERATIONS_ANNOTATION]: ' , ' },
    ],
  ];
  for (const [name, annotations, fields, left] of table) {
    test(`v1alpha1 annotations → v1beta1 fields: ${name}`, () => {
      const a: KubeObject = {
        apiVersion: POLICY_ALPHA,
        kind: 'PodUnavailableBudget',
        metadata: { name: 'p', annotations },
        spec: { selector, maxUnavailable: 1 },
      };
      const b = roundTrip(a);
      assert.deepEqual(b.spec, { selector, maxUnavailable: 1, ...fields });
      const { [CONVERSION_RESIDUAL_ANNOTATION]: _residual, ...kept } = b.metadata?.annotations ?? {};
      assert.deepEqual(Object.keys(kept).length > 0 ? kept : undefined, left);
    });
  }

  test('v1beta1 fields → v1alpha1 annotations; ignoredPodSelector only round-trips', () => {
    const b: KubeObject = {
      apiVersion: POLICY_BETA,
      kind: 'PodUnavailableBudget',
      metadata: { name: 'p' },
      spec: {
        targetRef: { apiVersion: BETA, kind: 'CloneSet', name: 'c' },
        minAvailable: '50%',
        protectOperations: ['UPDATE', 'RESIZE'],
        protectTotalReplicas: 8,
        ignoredPodSelector: { matchLabels: { canary: 'true' } },
      },
      status: { unavailableAllowed: 1, currentAvailable: 5, desiredAvailable: 4, totalReplicas: 8 },
    };
    const a = roundTrip(b);
    assert.deepEqual(a.spec, { targetRef: { apiVersion: BETA, kind: 'CloneSet', name: 'c' }, minAvailable: '50%' });
    assert.equal(a.metadata?.annotations?.[PUB_PROTECT_OPERATIONS_ANNOTATION], 'UPDATE,RESIZE');
    assert.equal(a.metadata?.annotations?.[PUB_PROTECT_TOTAL_REPLICAS_ANNOTATION], '8');
    assert.ok(residualOf(a));
  });
});

describe('residual annotation written by hand', () => {
  const alpha: KubeObject = {
    apiVersion: ALPHA,
    kind: 'CloneSet',
    metadata: { name: 'cs', finalizers: ['f'] },
    spec: { selector, template: podTemplate },
  };
  const crafted = (entries: unknown): KubeObject => ({
    ...alpha,
    metadata: { ...alpha.metadata, annotations: { [CONVERSION_RESIDUAL_ANNOTATION]: JSON.stringify(entries) } },
  });

  test('cannot change metadata other than labels and annotations, nor apiVersion or kind', () => {
    const out = convert(
      crafted([
        { p: ['metadata', 'name'], v: 'other' },
        { p: ['metadata', 'finalizers'], v: [], n: ['f'] },
        { p: ['kind'], v: 'Pod', n: 'CloneSet' },
        { p: ['apiVersion'], v: 'v1' },
        { p: [], v: {} },
      ]),
      BETA,
    );
    assert.equal(out.metadata?.name, 'cs');
    assert.deepEqual(out.metadata?.finalizers, ['f']);
    assert.equal(out.kind, 'CloneSet');
    assert.equal(out.apiVersion, BETA);
  });

  test('cannot reach object prototypes', () => {
    convert(
      crafted([
        { p: ['spec', '__proto__', 'polluted'], v: true },
        { p: ['spec', 'constructor', 'x'], v: 1 },
      ]),
      BETA,
    );
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  test('cannot smuggle a residual through a restored annotations map', () => {
    const out = convert(crafted([{ p: ['metadata', 'annotations'], v: { a: 'b', [CONVERSION_RESIDUAL_ANNOTATION]: '[]' } }]), BETA);
    assert.equal(out.metadata?.annotations?.a, 'b');
    // the residual left is the one describing this conversion, not the smuggled one
    assert.deepEqual(residualOf(out), [{ p: ['metadata', 'annotations'], n: { a: 'b' } }]);
  });
});
