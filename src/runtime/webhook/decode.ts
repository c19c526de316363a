// The shared step every admission request passes before any handler runs, decoding it the way
// upstream's Go webhooks do (src/apis/decode.ts; controller-runtime's admission.Decoder): the
// AdmissionRequest envelope, then object and oldObject against their kind's schema at the request's
// version, pod templates included. A wrong type, a null object or an out-of-range integer is refused
// with 400 naming the field, so handlers only ever see the shapes they are written for.
// Several registrations may share a path (pods and pods/eviction both use /validate-pod); the
// request's resource picks the one that runs.

import { Type } from '@sinclair/typebox';
import { ShapeDecoder, decoderFor, type Decoded } from '../../apis/decode.ts';
import { aggregateMessage } from '../../apis/field-errors.ts';
import { kinds, parseApiVersion, type KindDefinition } from '../../apis/registry.ts';
import type { AdmissionRequest, AdmissionResponse } from './review.ts';
import { errored } from './response.ts';
import type { WebhookType } from './paths.ts';
import type { Operation, WebhookRegistration } from './types.ts';
import { isJsonObject } from '../../apis/json.ts';

// The AdmissionRequest as the shared decode step checks it (types only; see src/apis/decode.ts).
const GVKShape = Type.Object({ group: Type.String(), version: Type.String(), kind: Type.String() });
const GVRShape = Type.Object({ group: Type.String(), version: Type.String(), resource: Type.String() });
const requestDecoder = new ShapeDecoder(
  Type.Object({
    uid: Type.String(),
    kind: GVKShape,
    resource: GVRShape,
    subResource: Type.String(),
    requestKind: GVKShape,
    requestResource: GVRShape,
    requestSubResource: Type.String(),
    name: Type.String(),
    namespace: Type.String(),
    operation: Type.String(),
    userInfo: Type.Object({
      username: Type.String(),
      uid: Type.String(),
      groups: Type.Array(Type.String()),
      extra: Type.Record(Type.String(), Type.Array(Type.String())),
    }),
    object: Type.Unknown(),
    oldObject: Type.Unknown(),
    dryRun: Type.Boolean(),
    options: Type.Unknown(),
  }),
);

const OPERATIONS: readonly Operation[] = ['CREATE', 'UPDATE', 'DELETE', 'CONNECT'];

// controller-runtime's decoder when the object it is asked for is absent.
const NO_CONTENT = 'there is no content to decode';

/** The registration among those sharing a path that serves this request's resource. */
function pickRegistration(regs: readonly WebhookRegistration[], req: AdmissionRequest): WebhookRegistration | undefined {
  const res = req.resource ? req.resource.resource + (req.subResource ? `/${req.subResource}` : '') : undefined;
  const match = regs.find((r) => r.group === req.resource?.group && r.resource === res);
  if (match) return match;
  return regs.length === 1 ? regs[0] : undefined;
}

// Built-in resources reach the webhooks already decoded by the API server into their Go types.
const anyObject = new ShapeDecoder(Type.Object({}));

/** The Kruise kind a registration admits; undefined for built-in resources. */
function kindOfRegistration(reg: WebhookRegistration): KindDefinition | undefined {
  const plural = reg.resource.split('/')[0];
  return kinds.find((k) => k.group === reg.group && k.plural === plural);
}

/** A request after the shared decode step: what the handlers get, or the denial. */
export type DecodedAdmission =
  | { req: AdmissionRequest; reg: WebhookRegistration; object: unknown; oldObject: unknown; denied?: undefined }
  | { denied: AdmissionResponse };

/**
 * The shared step every admission request passes before any handler runs: the envelope has its
 * types and a known operation, a registration serves its resource, the objects a handler may read
 * are present for its operation and have their kind's shape at the request's version (nulls of
 * typed fields removed, as Go reads them). Never throws.
 */
export function decodeAdmission(type: WebhookType, regs: readonly WebhookRegistration[], request: unknown): DecodedAdmission {
  const envelope = requestDecoder.decode(request, 'request');
  if (envelope.errors) {
    const uid = isJsonObject(request) && typeof request.uid === 'string' ? request.uid : '';
    return { denied: errored(400, aggregateMessage(envelope.errors), uid) };
  }
  const req = envelope.value as AdmissionRequest;
  const uid = req.uid ?? '';
  if (!OPERATIONS.includes(req.operation)) {
    const supported = OPERATIONS.map((o) => JSON.stringify(o)).join(', ');
    return {
      denied: errored(
        400,
        `request.operation: Unsupported value: ${JSON.stringify(req.operation ?? '')}: supported values: ${supported}`,
        uid,
      ),
    };
  }
  const reg = pickRegistration(regs, req);
  if (!reg) {
    const r = req.resource;
    return {
      denied: errored(
        400,
        `no webhook handles ${r ? `${r.resource}.${r.group}` : 'an unknown resource'}${req.subResource ? `/${req.subResource}` : ''}`,
        uid,
      ),
    };
  }
  const { operation } = req;
  const absent = (v: unknown) => v === undefined || v === null;
  if ((operation === 'CREATE' || operation === 'UPDATE') && absent(req.object)) return { denied: errored(400, NO_CONTENT, uid) };
  if (operation === 'UPDATE' && absent(req.oldObject)) return { denied: errored(400, NO_CONTENT, uid) };
  if (type === 'validate' && absent(req.object) && absent(req.oldObject)) return { denied: errored(400, NO_CONTENT, uid) };
  const def = kindOfRegistration(reg);
  const apiVersion = isJsonObject(req.object) && typeof req.object.apiVersion === 'string' ? req.object.apiVersion : '';
  const version = req.kind?.version || parseApiVersion(apiVersion).version;
  const decoder = def ? decoderFor(def, version) : anyObject;
  if (!decoder) {
    const served = def!.versions.map((v) => JSON.stringify(v.name)).join(', ');
    return {
      denied: errored(400, `request.kind.version: Unsupported value: ${JSON.stringify(version)}: supported values: ${served}`, uid),
    };
  }
  const decode = (v: unknown): Decoded => (absent(v) ? { value: v } : decoder.decode(v));
  const object = decode(req.object);
  const oldObject = decode(req.oldObject);
  const errors = [...(object.errors ?? []), ...(oldObject.errors ?? [])];
  if (errors.length) return { denied: errored(400, aggregateMessage(errors), uid) };
  return { req, reg, object: object.value, oldObject: oldObject.value };
}
