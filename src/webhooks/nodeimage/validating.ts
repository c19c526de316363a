// NodeImage validation (upstream pkg/webhook/nodeimage/validating): at most 256 images, non-empty
// unique tags, and each tag fully defaulted with a TTL; plain-message denials.
import type { NodeImage } from '../../apis/apps/nodeimage.ts';
import type { FieldError } from '../../apis/field-errors.ts';
import { AdmissionDenied } from '../../runtime/webhook/types.ts';
import type { AdmissionContext } from '../../runtime/webhook/types.ts';

const MAX_IMAGES_PER_NODE = 256;

export function nodeImageError(obj: NodeImage): string | undefined {
  const images = obj.spec?.images ?? {};
  const count = Object.keys(images).length;
  if (count > MAX_IMAGES_PER_NODE) return `spec images length ${count} can not be more than ${MAX_IMAGES_PER_NODE}`;
  for (const [name, image] of Object.entries(images)) {
    if (name.length === 0) return 'image name can not be empty';
    const tags = new Set<string>();
    for (const tag of image.tags ?? []) {
      if (!tag.tag) return `tag for image ${name} can not be empty`;
      if (tags.has(tag.tag)) return `duplicated tag ${tag.tag} for image ${name}`;
      tags.add(tag.tag);
      const fullName = `${name}/${tag.tag}`;
      if (!tag.createdAt) return `createAt field for ${fullName} can not be empty`;
      if ((tag.version ?? 0) < 0) return `version for ${fullName} can not be less than 0`;
      if (!tag.pullPolicy) return `pullPolicy field for ${fullName} must set`;
      if (tag.pullPolicy.ttlSecondsAfterFinished === undefined || tag.pullPolicy.ttlSecondsAfterFinished === null) {
        return `pullPolicy.ttlSecondsAfterFinished for ${fullName} must set`;
      }
    }
  }
  return undefined;
}

export function validateNodeImage(obj: NodeImage, _old: NodeImage | undefined, ctx: AdmissionContext): FieldError[] {
  if (!ctx.features.KruiseDaemon) throw new AdmissionDenied('feature-gate KruiseDaemon is not enabled', 403);
  const err = nodeImageError(obj);
  if (err) throw new AdmissionDenied(err);
  return [];
}
