// One admission request through its registration, transport-free so it is testable on plain objects
// (controller-runtime's pkg/webhook/admission/webhook.go):
//   - mutate: the registration's Defaulter runs on a private copy of the object and the difference
//     is answered as a JSON patch (patchResponse); no change, no patch;
//   - validate: field errors deny with admission.Errored(422, aggregate) → status {code: 422,
//     message}; none allow with status {code: 200};
//   - a handler that outlives the request timeout → admission.Errored(500, err).
// DELETE requests carry no object: validators get the object being deleted (oldObject) as `obj`.
// A handler that throws is a bug: the request is denied with a generic message (the error and its
// stack go to the log, never to the client) and counted in controller_runtime_webhook_panics_total,
// which the fuzz test (test/unit/webhooks/fuzz.test.ts) requires to stay at zero.

import type { FeatureGates } from '../../apis/features.ts';
import { fieldErrorsMessage } from '../../apis/field-errors.ts';
import { realClock, type Clock, type Timer } from '../../util/clock.ts';
import { logger as rootLogger, type Logger } from '../log.ts';
import type { PubBudgetGuard } from '../pub-budget.ts';
import { decodeAdmission } from './decode.ts';
import { webhookPanics } from './metrics.ts';
import { webhookPath, type WebhookType } from './paths.ts';
import { INTERNAL_ERROR_MESSAGE, errored, patchResponse } from './response.ts';
import type { AdmissionRequest, AdmissionResponse } from './review.ts';
import {
  AdmissionDenied,
  type AdmissionCache,
  type AdmissionContext,
  type AdmissionReader,
  type AdmissionWriter,
  type WebhookRegistration,
} from './types.ts';

export interface AdmissionOptions {
  features: FeatureGates;
  reader?: AdmissionReader;
  /** Informer-backed reads for hot-path webhooks (pods). */
  cache?: AdmissionCache;
  /** The process's PodUnavailableBudget guard (pod webhook). */
  pubBudget?: PubBudgetGuard;
  /** Status writes (WorkloadSpread's subset bookkeeping). */
  writer?: AdmissionWriter;
  /** ms a handler may take before the request is answered with an error; default 10 s. */
  timeoutMs?: number;
  logger?: Logger;
  /** Times the handlers (and the server's waits); default the real clock. */
  clock?: Clock;
}

function contextOf(req: AdmissionRequest, oldObject: unknown, opts: AdmissionOptions): AdmissionContext {
  const kind = req.kind ?? { group: '', version: '', kind: '' };
  return {
    operation: req.operation,
    apiVersion: kind.group ? `${kind.group}/${kind.version}` : kind.version,
    namespace: req.namespace || undefined,
    name: req.name || undefined,
    oldObject: oldObject ?? undefined,
    userInfo: req.userInfo ?? {},
    dryRun: req.dryRun === true,
    features: opts.features,
    reader: opts.reader,
    cache: opts.cache,
    pubBudget: opts.pubBudget,
    writer: opts.writer,
  };
}

/** Runs one admission request (as received: it is decoded first) through the registrations of one path. */
export async function admit(
  type: WebhookType,
  regs: readonly WebhookRegistration[],
  request: unknown,
  opts: AdmissionOptions,
): Promise<AdmissionResponse> {
  const decoded = decodeAdmission(type, regs, request);
  if (decoded.denied) return decoded.denied;
  const { req, reg } = decoded;
  const uid = req.uid ?? '';
  const ctx = contextOf(req, decoded.oldObject, opts);
  const run = async (): Promise<AdmissionResponse> => {
    if (type === 'mutate') {
      if (!reg.mutate || decoded.object == null) return { uid, allowed: true };
      const copy = structuredClone(decoded.object);
      await reg.mutate(copy, ctx);
      // The patch is against the object as sent: with a change, nulls the decode dropped are
      // removed too, as upstream's marshalled Go struct omits them.
      return patchResponse(uid, req.object as object, copy);
    }
    if (!reg.validate) return { uid, allowed: true, status: { code: 200 } };
    const obj = decoded.object ?? decoded.oldObject;
    const old = decoded.oldObject ?? undefined;
    const errs = await reg.validate(obj, old, ctx);
    if (errs.length) return { uid, allowed: false, status: { code: 422, message: fieldErrorsMessage(errs) } };
    return { uid, allowed: true, status: { code: 200 } };
  };
  const timeoutMs = opts.timeoutMs ?? 10_000;
  let timer: Timer | undefined;
  const timeout = new Promise<AdmissionResponse>((resolve) => {
    timer = (opts.clock ?? realClock).setTimer(timeoutMs, () =>
      resolve(errored(500, `admission handler did not answer within ${timeoutMs / 1000}s`, uid)),
    );
  });
  try {
    return await Promise.race([run(), timeout]);
  } catch (err) {
    // A deliberate refusal carries upstream's code (400/403/...) and its own message.
    if (err instanceof AdmissionDenied) return errored(err.code, err.message, uid);
    webhookPanics.inc();
    (opts.logger ?? rootLogger).error(
      { err, uid, webhook: webhookPath(type, reg), operation: req.operation, namespace: req.namespace, name: req.name },
      'admission handler failed unexpectedly',
    );
    return errored(422, INTERNAL_ERROR_MESSAGE, uid);
  } finally {
    timer?.cancel();
  }
}
