// NodeImage defaulting (upstream SetDefaultsNodeImage): every tag gets createdAt (now) and a pull
// policy with timeout 600s and 3 retries.
import type { NodeImage } from '../../apis/apps/nodeimage.ts';
import { type Clock, realClock } from '../../util/clock.ts';
import type { AdmissionContext, Defaulter } from '../../runtime/webhook/types.ts';

/** RFC 3339 at second precision, as metav1.Time serialises. */
function rfc3339(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

export function setDefaultsNodeImage(obj: NodeImage, nowMs: number): void {
  for (const image of Object.values(obj.spec?.images ?? {})) {
    for (const tag of image.tags ?? []) {
      tag.createdAt ??= rfc3339(nowMs);
      tag.pullPolicy ??= {};
      tag.pullPolicy.timeoutSeconds ??= 600;
      tag.pullPolicy.backoffLimit ??= 3;
    }
  }
}

export function nodeImageDefaulter(clock: Clock = realClock): Defaulter<NodeImage> {
  return (obj: NodeImage, _ctx: AdmissionContext) => setDefaultsNodeImage(obj, clock.now());
}
