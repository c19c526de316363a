// v1alpha1 ↔ v1beta1 conversion of every Kruise kind served in both versions (behaviour spec §0,
// §22), and the CRD conversion webhook logic built on it.
//
// `convert` maps the fields of one version onto the other (per-kind modules) and records, in the
// residual annotation (shared.ts), whatever the target version cannot express, so that
// converting back gives the original object again.

import { Type } from '@sinclair/typebox';
import { ShapeDecoder, decoderFor } from '../decode.ts';
import { aggregateMessage } from '../field-errors.ts';
import { kindFor, parseApiVersion } from '../registry.ts';
import { advancedCronJobConversion } from './advancedcronjob.ts';
import { broadcastJobConversion } from './broadcastjob.ts';
import { cloneSetConversion } from './cloneset.ts';
import { containerRecreateRequestConversion } from './containerrecreaterequest.ts';
import { daemonSetConversion } from './daemonset.ts';
import { imageListPullJobConversion } from './imagelistpulljob.ts';
import { imagePullJobConversion } from './imagepulljob.ts';
import { nodeImageConversion } from './nodeimage.ts';
import { persistentPodStateConversion } from './persistentpodstate.ts';
import { podUnavailableBudgetConversion } from './podunavailablebudget.ts';
import { resourceDistributionConversion } from './resourcedistribution.ts';
import { applyResidual, clone, computeResidual, putResidual, takeResidual, type KindConversion, type KubeObject } from './shared.ts';
import { isJsonObject } from '../json.ts';
import { sidecarSetConversion } from './sidecarset.ts';
import { statefulSetConversion } from './statefulset.ts';
import { unitedDeploymentConversion } from './uniteddeployment.ts';
import { workloadSpreadConversion } from './workloadspread.ts';

export { CONVERSION_RESIDUAL_ANNOTATION, type KindConversion, type KubeObject } from './shared.ts';

/** Conversions by kind name (all apps.kruise.io but PodUnavailableBudget, policy.kruise.io). */
export const conversions: Readonly<Record<string, KindConversion>> = {
  CloneSet: cloneSetConversion,
  StatefulSet: statefulSetConversion,
  DaemonSet: daemonSetConversion,
  SidecarSet: sidecarSetConversion,
  BroadcastJob: broadcastJobConversion,
  AdvancedCronJob: advancedCronJobConversion,
  UnitedDeployment: unitedDeploymentConversion,
  WorkloadSpread: workloadSpreadConversion,
  ContainerRecreateRequest: containerRecreateRequestConversion,
  ImagePullJob: imagePullJobConversion,
  ImageListPullJob: imageListPullJobConversion,
  NodeImage: nodeImageConversion,
  ResourceDistribution: resourceDistributionConversion,
  PersistentPodState: persistentPodStateConversion,
  PodUnavailableBudget: podUnavailableBudgetConversion,
};

export class ConversionError extends Error {
  override name = 'ConversionError';
}

const typeMeta = new ShapeDecoder(Type.Object({ apiVersion: Type.String(), kind: Type.String() }));

/**
 * `obj` as the converters may read it: of its kind's shape at its version, as upstream's Go
 * conversion decodes it (src/apis/decode.ts); a ConversionError naming the fields otherwise.
 * Non-objects and objects of unknown kinds are left for convert() to refuse.
 */
function decoded(obj: unknown): KubeObject {
  if (!isJsonObject(obj)) return obj as KubeObject;
  const meta = typeMeta.decode(obj);
  if (meta.errors) throw new ConversionError(aggregateMessage(meta.errors));
  if (typeof obj.apiVersion !== 'string' || typeof obj.kind !== 'string') return obj;
  const { group, version } = parseApiVersion(obj.apiVersion);
  const def = kindFor(group, obj.kind);
  const decoder = def && decoderFor(def, version);
  if (!decoder) return obj;
  const result = decoder.decode(obj);
  if (result.errors) throw new ConversionError(aggregateMessage(result.errors));
  return result.value as KubeObject;
}

type Direction = 'toV1beta1' | 'toV1alpha1';

/**
 * `obj` converted to `toApiVersion` (same group, another served version of its kind): a new
 * object with apiVersion set and metadata preserved (only labels and annotations may differ).
 * Throws ConversionError when the kind or either version is not served.
 */
export function convert(obj: KubeObject, toApiVersion: string): KubeObject {
  if (!isJsonObject(obj)) throw new ConversionError('object to convert is not a JSON object');
  const { apiVersion, kind } = obj;
  if (typeof apiVersion !== 'string' || typeof kind !== 'string' || apiVersion === '' || kind === '') {
    throw new ConversionError('object to convert has no apiVersion or kind');
  }
  const from = parseApiVersion(apiVersion);
  const to = parseApiVersion(toApiVersion);
  const def = kindFor(from.group, kind);
  if (!def) throw new ConversionError(`unknown kind ${kind} in ${apiVersion}`);
  if (to.group !== from.group) {
    throw new ConversionError(`cannot convert ${kind} from group ${from.group} to ${toApiVersion}`);
  }
  for (const { version } of [from, to]) {
    if (!def.versions.some((v) => v.name === version)) {
      throw new ConversionError(`${kind} is not served in ${def.group}/${version}`);
    }
  }
  if (from.version === to.version) return { ...clone(obj), apiVersion: toApiVersion };

  const conversion = conversions[kind];
  const forward: Direction | undefined =
    from.version === 'v1alpha1' && to.version === 'v1beta1'
      ? 'toV1beta1'
      : from.version === 'v1beta1' && to.version === 'v1alpha1'
        ? 'toV1alpha1'
        : undefined;
  if (!conversion || !forward) {
    throw new ConversionError(`no conversion for ${kind} from ${apiVersion} to ${toApiVersion}`);
  }
  const backward: Direction = forward === 'toV1beta1' ? 'toV1alpha1' : 'toV1beta1';

  const source = clone(obj);
  const residual = takeResidual(source);
  const converted = applyResidual(conversion[forward](source), residual);
  putResidual(converted, computeResidual(conversion[backward](converted), source));
  return converted;
}

// ---------------------------------------------------------------------------------------------
// apiextensions.k8s.io/v1 ConversionReview

export interface ConversionRequest {
  uid: string;
  desiredAPIVersion: string;
  objects: unknown[];
}

export interface ConversionResponse {
  uid: string;
  convertedObjects: KubeObject[];
  result: { status: 'Success' } | { status: 'Failure'; message: string };
}

export interface ConversionReview {
  apiVersion?: string;
  kind?: string;
  request?: ConversionRequest;
  response?: ConversionResponse;
}

const REVIEW_API_VERSION = 'apiextensions.k8s.io/v1';

/**
 * Answers a CRD conversion webhook call: every object of the request converted to
 * request.desiredAPIVersion, or a Failure result (and no objects) when any of them cannot be.
 */
export function handleConversionReview(review: unknown): ConversionReview {
  const request = isJsonObject(review) ? review.request : undefined;
  const uid = isJsonObject(request) && typeof request.uid === 'string' ? request.uid : '';
  const failure = (message: string): ConversionReview => ({
    apiVersion: REVIEW_API_VERSION,
    kind: 'ConversionReview',
    response: { uid, convertedObjects: [], result: { status: 'Failure', message } },
  });

  if (!isJsonObject(review) || review.kind !== 'ConversionReview' || review.apiVersion !== REVIEW_API_VERSION) {
    return failure(`expected a ConversionReview of ${REVIEW_API_VERSION}`);
  }
  if (!isJsonObject(request)) return failure('ConversionReview has no request');
  const { desiredAPIVersion, objects } = request;
  if (typeof desiredAPIVersion !== 'string' || desiredAPIVersion === '') {
    return failure('ConversionReview request has no desiredAPIVersion');
  }
  if (!Array.isArray(objects)) return failure('ConversionReview request has no objects');

  const convertedObjects: KubeObject[] = [];
  for (const [i, obj] of objects.entries()) {
    const name = isJsonObject(obj) && isJsonObject(obj.metadata) ? obj.metadata.name : undefined;
    const what = typeof name === 'string' ? `object ${i} (${name})` : `object ${i}`;
    // Other errors are bugs: they propagate to the webhook server, which logs them.
    try {
      convertedObjects.push(convert(decoded(obj), desiredAPIVersion));
    } catch (err) {
      if (!(err instanceof ConversionError)) throw err;
      return failure(`${what}: ${err.message}`);
    }
  }
  return {
    apiVersion: REVIEW_API_VERSION,
    kind: 'ConversionReview',
    response: { uid, convertedObjects, result: { status: 'Success' } },
  };
}
