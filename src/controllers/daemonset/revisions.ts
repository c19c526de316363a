// ControllerRevisions of an Advanced DaemonSet (upstream daemonset_history.go, as Kubernetes'
// DaemonSet): the data is the pod template as a strategic-merge "replace" patch, the revision's
// `controller-revision-hash` label holds the bare hash that pods carry and status.updateRevision
// reports, and the name is `<ds>-<hash>`. The hash is Kubernetes' ComputeHash of the template and
// status.collisionCount (util/go-pod-template.ts), as v1.8.2 computes it, so a template gets the
// same revision name and pod label under either manager.

import type { DaemonSet } from '../../apis/apps/daemonset.ts';
import { CONTROLLER_REVISION_HASH_LABEL } from '../../apis/constants.ts';
import type { OwnerReference } from '../../apis/core-objects.ts';
import { computePodTemplateHash } from '../../util/go-pod-template.ts';
import { marshalGoJSON } from '../../util/revision.ts';
import { chooseUpdateRevision, normalisePodTemplate, type ControllerRevision } from '../../util/revision-data.ts';

export const DEFAULT_REVISION_HISTORY_LIMIT = 10;

export function daemonSetControllerRef(ds: DaemonSet): OwnerReference {
  return {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'DaemonSet',
    name: ds.metadata?.name ?? '',
    uid: ds.metadata?.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** The hash a revision stands for (its label; the name's suffix for revisions without one). */
export function revisionHash(rev: ControllerRevision): string {
  const label = rev.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL];
  if (label) return label;
  const name = rev.metadata.name ?? '';
  return name.slice(name.lastIndexOf('-') + 1);
}

/**
 * snapshot(): the revision the DaemonSet's current template would be stored as. A null/absent
 * collisionCount (upstream's nil, the usual case) hashes differently from 0.
 */
export function newDaemonSetRevision(ds: DaemonSet, revision: number, collisionCount?: number | null): ControllerRevision {
  const data = marshalGoJSON({ spec: { template: { ...normalisePodTemplate(ds.spec?.template), $patch: 'replace' } } });
  const hash = computePodTemplateHash(ds.spec?.template, collisionCount);
  return {
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: {
      name: `${ds.metadata?.name ?? ''}-${hash}`,
      namespace: ds.metadata?.namespace,
      labels: { ...(ds.spec?.template?.metadata?.labels ?? {}), [CONTROLLER_REVISION_HASH_LABEL]: hash },
      ...(ds.metadata?.annotations ? { annotations: { ...ds.metadata.annotations } } : {}),
      ownerReferences: [daemonSetControllerRef(ds)],
    },
    data: JSON.parse(data),
    revision,
  };
}

export interface RevisionChoice {
  /** The revision of the current template (existing, or newRevision). */
  current: ControllerRevision;
  hash: string;
  /** status.collisionCount: absent until a name collision makes it 1 (as upstream's nil pointer). */
  collisionCount?: number;
  /** To create first. */
  newRevision?: ControllerRevision;
  /** An older equal revision brought back: its new revision number (rollback). */
  revisionBump?: { name: string; revision: number };
  /** Every other revision. */
  old: ControllerRevision[];
}

/** constructHistory: find (or make) the revision of the current template. */
export function chooseRevisions(ds: DaemonSet, revisions: readonly ControllerRevision[]): RevisionChoice {
  const unset = ds.status?.collisionCount === undefined || ds.status.collisionCount === null;
  // Counting starts from 0 either way; unset stays unset (nil) until a collision bumps it.
  const asStored = (c: number) => (unset && c === 0 ? undefined : c);
  const choice = chooseUpdateRevision(revisions, ds.status?.collisionCount ?? 0, (n, c) => newDaemonSetRevision(ds, n, asStored(c)));
  const current = choice.update;
  const stored = choice.renumbered ?? (choice.newRevision ? undefined : current);
  return {
    current,
    hash: revisionHash(current),
    collisionCount: asStored(choice.collisionCount),
    newRevision: choice.newRevision,
    revisionBump: choice.renumbered && { name: choice.renumbered.metadata.name ?? '', revision: current.revision },
    old: revisions.filter((r) => r !== stored).sort((a, b) => a.revision - b.revision),
  };
}

/** cleanupHistory: old revisions no live pod uses, oldest first, beyond revisionHistoryLimit. */
export function revisionsToTruncate(ds: DaemonSet, old: readonly ControllerRevision[], podHashes: ReadonlySet<string>): string[] {
  const limit = ds.spec?.revisionHistoryLimit ?? DEFAULT_REVISION_HISTORY_LIMIT;
  const dead = old.filter((r) => !podHashes.has(revisionHash(r))).sort((a, b) => a.revision - b.revision);
  return dead.length <= limit ? [] : dead.slice(0, dead.length - limit).map((r) => r.metadata.name ?? '');
}
