// NodeImage defaulting (upstream SetDefaultsNodeImage): every tag gets createdAt (now) and a pull
// policy with timeout 600s and 3 retries.
import type { NodeImage } from '../../apis/apps/nodeimage.ts';
import { metaTime, realClock, type Clock } from '../../util/clock.ts';
import type { AdmissionContext, Defaulter } from '../../runtime/webhook/types.ts';

export function setDefaultsNodeImage(obj: NodeImage, nowMs: number): void {
  for (const image of Object.values(obj.spec?.images ?? {})) {
    for (const tag of image.tags ?? []) {
      tag.createdAt ??= metaTime(nowMs);
      tag.pullPolicy ??= {};
      tag.pullPolicy.timeoutSeconds ??= 600;
      tag.pullPolicy.backoffLimit ??= 3;
    }
  }
}

export function nodeImageDefaulter(clock: Clock = realClock): Defaulter<NodeImage> {
  return (obj: NodeImage, _ctx: AdmissionContext) => setDefaultsNodeImage(obj, clock.now());
}
