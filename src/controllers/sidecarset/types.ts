// The shapes sidecarset's planner reads and returns, apart from plan.ts so that the files of its
// phases can name them without importing the planner back.
import type { ControllerRevision, Namespace, Pod } from '../../apis/core-objects.ts';
import type { StoredSidecarSet } from '../../util/sidecarset.ts';

export interface SidecarSetObserved {
  sidecarSet: StoredSidecarSet;
  /** Pods the selector picks, in every namespace (the planner applies namespaceSelector). */
  pods: readonly Pod[];
  namespaces: ReadonlyMap<string, Pick<Namespace, 'metadata'>>;
  /** Revisions labelled kruise.io/sidecarset-name=<name> in the manager's namespace. */
  revisions: readonly ControllerRevision[];
  /** The manager's namespace, where revisions live. */
  revisionNamespace: string;
  now: Date;
}
