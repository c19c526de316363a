// Revision history of a workload, as `rollout history` / `rollout undo` read it: ControllerRevisions
// owned by the object (CloneSet, Advanced StatefulSet/DaemonSet, native StatefulSet/DaemonSet), or
// ReplicaSets with deployment.kubernetes.io/revision for a Deployment.
import type { KubeObject } from '../../apis/core-objects.ts';
import { ControllerRevisions, ReplicaSets, type ResourceType } from '../../runtime/resources.ts';
import type { PodTemplateSpec } from '../../apis/core.ts';
import { templateFromRevision, type ControllerRevision } from '../../util/revision-data.ts';
import { CliError, type Session } from './session.ts';
import { isJsonObject } from '../../apis/json.ts';

export const CHANGE_CAUSE_ANNOTATION = 'kubernetes.io/change-cause';
const DEPLOYMENT_REVISION_ANNOTATION = 'deployment.kubernetes.io/revision';
/** Labels the controllers add to pods but not to the workload's template. */
const GENERATED_LABELS = ['pod-template-hash', 'controller-revision-hash'];

export interface Revision {
  revision: number;
  name: string;
  changeCause?: string;
  template: PodTemplateSpec;
}

const HISTORY_KINDS = new Set(['Deployment', 'StatefulSet', 'DaemonSet', 'CloneSet']);

export async function revisionsOf(session: Session, type: ResourceType, obj: KubeObject): Promise<Revision[]> {
  if (!HISTORY_KINDS.has(type.kind)) throw new CliError(`no history viewer has been implemented for ${type.kind}`);
  const owned = (o: KubeObject) => o.metadata.ownerReferences?.some((r) => r.uid === obj.metadata.uid) ?? false;
  const namespace = obj.metadata.namespace;
  if (type.kind === 'Deployment' && type.group === 'apps') {
    const sets = (
      await session.client.list<KubeObject & { spec?: { template?: PodTemplateSpec } }>(ReplicaSets, { namespace })
    ).items.filter(owned);
    return sets
      .map((rs) => ({
        revision: Number(rs.metadata.annotations?.[DEPLOYMENT_REVISION_ANNOTATION] ?? 0),
        name: rs.metadata.name ?? '',
        changeCause: rs.metadata.annotations?.[CHANGE_CAUSE_ANNOTATION],
        template: withoutGeneratedLabels(rs.spec?.template ?? {}),
      }))
      .sort((a, b) => a.revision - b.revision);
  }
  const revisions = (await session.client.list<ControllerRevision>(ControllerRevisions, { namespace })).items.filter(owned);
  return revisions
    .map((r) => ({
      revision: r.revision,
      name: r.metadata.name ?? '',
      changeCause: r.metadata.annotations?.[CHANGE_CAUSE_ANNOTATION],
      template: templateFromRevision(r),
    }))
    .sort((a, b) => a.revision - b.revision);
}

export function withoutGeneratedLabels(template: PodTemplateSpec): PodTemplateSpec {
  const labels = { ...template.metadata?.labels };
  for (const key of GENERATED_LABELS) delete labels[key];
  return { ...template, metadata: { ...template.metadata, labels } };
}

/** The revision undo goes to: --to-revision N, or (0) the one before the latest. */
export function rollbackTarget(revisions: readonly Revision[], toRevision: number): Revision {
  if (toRevision > 0) {
    const r = revisions.find((x) => x.revision === toRevision);
    if (!r) throw new CliError(`unable to find specified revision ${toRevision} in history`);
    return r;
  }
  if (revisions.length < 2) throw new CliError('no rollout history found (undo needs a previous revision)');
  return revisions[revisions.length - 2]!;
}

/** Same template as far as a rollback is concerned (generated labels aside). */
export function sameTemplate(a: PodTemplateSpec | undefined, b: PodTemplateSpec): boolean {
  return canonical(withoutGeneratedLabels(a ?? {})) === canonical(withoutGeneratedLabels(b));
}

/**
 * Key-sorted JSON with what Go's encoding leaves implicit dropped: a revision records the template
 * as Go marshals it (`creationTimestamp: null`, `resources: {}`, empty lists), the live object as
 * the API server stores it, and both mean the same.
 */
function canonical(v: unknown): string {
  const absent = (x: unknown) =>
    x === undefined || x === null || (Array.isArray(x) && x.length === 0) || (isJsonObject(x) && Object.values(x).every(absent));
  return JSON.stringify(v, (_k, value: unknown) => {
    if (isJsonObject(value)) {
      const entries = Object.keys(value)
        .sort()
        .filter((k) => !absent(value[k]))
        .map((k) => [k, value[k]] as const);
      return Object.fromEntries(entries);
    }
    return value;
  });
}
