// The SidecarSet's ControllerRevisions (upstream registerLatestRevision + truncateHistory, spec
// §6.3 step 1): the revision of its current spec — an existing one, an equal older one renumbered
// as the newest, or a new one — its customVersion label, and the history past
// revisionHistoryLimit that no pod still records.
import type { SidecarSet } from '../../apis/apps/sidecarset.ts';
import type { ControllerRevision, Pod } from '../../apis/core-objects.ts';
import { SIDECARSET_CUSTOM_VERSION_LABEL } from '../../apis/constants.ts';
import { CONTROLLER_REVISION_HASH_KEY, hashControllerRevision, marshalGoJSON } from '../../util/revision.ts';
import { podSidecarSetControllerRevision, revisionLabels, sidecarSetRevisionData, sidecarSetRevisionName } from '../../util/sidecarset.ts';
import type { SidecarSetObserved } from './types.ts';

export interface RevisionPlan {
  /** The revision of the current spec: an existing one (maybe renumbered) or one to create. */
  latestName: string;
  create?: ControllerRevision;
  /** An equal older revision to renumber as the newest. */
  renumber?: { name: string; revision: number };
  /** customVersion label to set on the latest revision. */
  customVersionLabel?: string;
  /** Old revisions past revisionHistoryLimit that no pod uses. */
  delete: string[];
}

function sortRevisions(revisions: readonly ControllerRevision[]): ControllerRevision[] {
  return [...revisions].sort((a, b) => a.revision - b.revision || ((a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1));
}

/** registerLatestRevision + truncateHistory (spec §6.3 step 1). */
export function planRevisions(o: SidecarSetObserved, pods: readonly Pod[]): RevisionPlan {
  const s = o.sidecarSet;
  const revisions = sortRevisions(o.revisions);
  const data = marshalGoJSON(sidecarSetRevisionData(s));
  const next = (revisions.at(-1)?.revision ?? 0) + 1;
  const equal = revisions.filter((r) => marshalGoJSON(r.data) === data);
  const plan: RevisionPlan = { latestName: '', delete: [] };
  let kept = revisions;
  if (equal.length && equal.at(-1) === revisions.at(-1)) {
    plan.latestName = revisions.at(-1)!.metadata.name!;
  } else if (equal.length) {
    const reuse = equal.at(-1)!;
    plan.latestName = reuse.metadata.name!;
    plan.renumber = { name: plan.latestName, revision: next };
    kept = [...revisions.filter((r) => r !== reuse), { ...reuse, revision: next }];
  } else {
    // Upstream always hashes with a collision count (0 until a collision), never without one.
    const collisionCount = s.status?.collisionCount ?? 0;
    const name = sidecarSetRevisionName(s, collisionCount);
    plan.latestName = name;
    const annotations: Record<string, string> = { ...s.metadata.annotations };
    plan.create = {
      apiVersion: 'apps/v1',
      kind: 'ControllerRevision',
      metadata: {
        name,
        namespace: o.revisionNamespace,
        labels: { ...revisionLabels(s), [CONTROLLER_REVISION_HASH_KEY]: hashControllerRevision(data, collisionCount) },
        annotations,
        ownerReferences: [
          {
            apiVersion: 'apps.kruise.io/v1beta1',
            kind: 'SidecarSet',
            name: s.metadata.name,
            uid: s.metadata.uid ?? '',
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      // Go's bytes (sorted keys): OpenKruise compares revision data byte for byte (EqualRevision).
      data: JSON.parse(data),
      revision: next,
    };
    kept = [...revisions, plan.create];
  }
  const customVersion = s.spec?.customVersion;
  const latest = kept.find((r) => r.metadata.name === plan.latestName);
  if (customVersion && latest && latest !== plan.create && latest.metadata.labels?.[SIDECARSET_CUSTOM_VERSION_LABEL] !== customVersion) {
    plan.customVersionLabel = customVersion;
  }

  const limit = Math.max(1, s.spec?.revisionHistoryLimit ?? 10);
  let excess = kept.length - limit;
  if (excess > 0) {
    const active = activeRevisions(s, pods, kept);
    for (let i = 0; i < kept.length - 1 && excess > 0; i++) {
      const name = kept[i]!.metadata.name!;
      if (active.has(name)) continue;
      plan.delete.push(name);
      excess--;
    }
  }
  return plan;
}

/** Revisions pods still record, or that injectionStrategy.revision names. */
function activeRevisions(
  s: SidecarSet & { metadata: { name: string } },
  pods: readonly Pod[],
  revisions: readonly ControllerRevision[],
): Set<string> {
  const active = new Set<string>();
  for (const p of pods) {
    const r = podSidecarSetControllerRevision(s.metadata.name, p);
    if (r) active.add(r);
  }
  const info = s.spec?.injectionStrategy?.revision;
  if (info?.revisionName) active.add(info.revisionName);
  if (info?.customVersion) {
    const withVersion = revisions.filter((r) => r.metadata.labels?.[SIDECARSET_CUSTOM_VERSION_LABEL] === info.customVersion);
    const newest = withVersion.at(-1);
    if (newest?.metadata.name) active.add(newest.metadata.name);
  }
  return active;
}
