// Controller-reference claiming (Kubernetes controller_ref_manager.go, Kruise pkg/util/refmanager):
// which objects a workload controller may act on. An object owned by the controller whose labels
// still match its selector is kept; one whose labels stopped matching is released (the ownerRef is
// removed, so the object lives on unmanaged); a matching orphan is adopted; anything controlled by
// someone else is never touched. Which objects a controller hands in decides what it can adopt:
// upstream CloneSet hands in only the pods it already owns (listed by ownerRef UID), so it releases
// but never adopts, while controllers that list by selector also adopt orphans.
//
// The decision is pure (claimDecision); ControllerRefManager makes the writes.

import { PatchType, type KubeClient } from './client.ts';
import type { KubeObject, OwnerReference } from '../apis/core-objects.ts';
import { isConflict, isNotFound } from './errors.ts';
import type { ResourceType } from './resources.ts';
import type { LabelMatcher } from './store.ts';
import { errMessage } from '../util/errors.ts';

/** What to do with one object: keep it, adopt it, release it, or leave it alone. */
export type ClaimDecision = 'keep' | 'adopt' | 'release' | 'ignore';

export interface ClaimOwner {
  uid: string;
  /** The owner has a deletionTimestamp: it neither adopts nor releases any more. */
  deleting: boolean;
}

/** The controller ownerReference of obj, if any (metav1.GetControllerOf). */
export function controllerOf(obj: KubeObject): OwnerReference | undefined {
  return obj.metadata.ownerReferences?.find((r) => r.controller === true);
}

/**
 * ClaimObject's decision for one object. An owner being deleted still keeps what it owns and
 * matches (that takes no write), but adopts and releases nothing; an object being deleted is never
 * adopted.
 */
export function claimDecision(owner: ClaimOwner, obj: KubeObject, matches: boolean): ClaimDecision {
  const ref = controllerOf(obj);
  if (ref) {
    if (ref.uid !== owner.uid) return 'ignore';
    if (matches) return 'keep';
    return owner.deleting ? 'ignore' : 'release';
  }
  if (owner.deleting || !matches || obj.metadata.deletionTimestamp) return 'ignore';
  return 'adopt';
}

/** Adoptions and releases that failed in one claim; every object was still tried. */
export class ClaimError extends Error {
  constructor(
    readonly causes: readonly unknown[],
    messages: readonly string[],
  ) {
    super(messages.join('; '));
    this.name = 'ClaimError';
  }

  /** Every failure lost an optimistic-concurrency race: retry from a fresh cache, not with backoff. */
  onlyConflicts(): boolean {
    return this.causes.every(isConflict);
  }
}

export type RefManagerClient = Pick<KubeClient, 'get' | 'patch'>;

export interface RefManagerOptions<O extends KubeObject> {
  client: RefManagerClient;
  /** The controller object as the cache has it. */
  owner: O;
  /** Its resource type (for the uncached re-read before the first adoption). */
  ownerType: ResourceType;
  /** Its controller ownerReference, as written on adopted objects. */
  ownerRef: OwnerReference;
  selector: LabelMatcher;
}

/**
 * Claims objects for one owner in one reconcile. Before the first adoption the owner is read again
 * from the API server (not the cache), so a controller deleted a moment ago does not adopt
 * (upstream RecheckDeletionTimestamp). Writes are JSON merge patches carrying the object's uid and
 * resourceVersion as preconditions: a recreated or concurrently changed object fails with a conflict
 * instead of losing someone else's ownerReference, and the controller retries from a fresh cache.
 */
export class ControllerRefManager<O extends KubeObject> {
  private canAdopt: Promise<void> | undefined;

  constructor(private readonly opts: RefManagerOptions<O>) {}

  private get owner(): ClaimOwner {
    const m = this.opts.owner.metadata;
    return { uid: m.uid ?? '', deleting: Boolean(m.deletionTimestamp) };
  }

  /**
   * The objects this owner controls after claiming, in input order; adopted ones as written.
   * `onWritten` sees every object adopted or released (for resourceVersion expectations). Every
   * object is tried; failures (other than the object being gone) are thrown together at the end,
   * as a ClaimError.
   */
  async claim<T extends KubeObject>(type: ResourceType, objects: readonly T[], onWritten?: (obj: T) => void): Promise<T[]> {
    const claimed: T[] = [];
    const causes: unknown[] = [];
    const messages: string[] = [];
    for (const obj of objects) {
      const decision = claimDecision(this.owner, obj, this.opts.selector.matches(obj.metadata.labels));
      if (decision === 'keep') claimed.push(obj);
      if (decision !== 'adopt' && decision !== 'release') continue;
      try {
        const written = decision === 'adopt' ? await this.adopt(type, obj) : await this.release(type, obj);
        onWritten?.(written);
        if (decision === 'adopt') claimed.push(written);
      } catch (err) {
        if (isNotFound(err)) continue;
        causes.push(err);
        messages.push(`cannot ${decision} ${type.kind} ${describe(obj)}: ${errMessage(err)}`);
      }
    }
    if (causes.length) throw new ClaimError(causes, messages);
    return claimed;
  }

  private recheckOwner(): Promise<void> {
    this.canAdopt ??= (async () => {
      const { client, owner, ownerType } = this.opts;
      const fresh = await client.get<KubeObject>(ownerType, owner.metadata.name ?? '', { namespace: owner.metadata.namespace });
      if (fresh.metadata.uid !== owner.metadata.uid) {
        throw new Error(`original owner ${describe(owner)} is gone: got uid ${fresh.metadata.uid}, wanted ${owner.metadata.uid}`);
      }
      if (fresh.metadata.deletionTimestamp) {
        throw new Error(`${describe(owner)} has just been deleted at ${fresh.metadata.deletionTimestamp}`);
      }
    })();
    return this.canAdopt;
  }

  private async adopt<T extends KubeObject>(type: ResourceType, obj: T): Promise<T> {
    try {
      await this.recheckOwner();
    } catch (err) {
      // The owner itself being gone is not the object's NotFound: report it.
      throw new Error(`can't adopt: ${errMessage(err)}`, { cause: err });
    }
    return this.writeOwnerReferences(type, obj, [...(obj.metadata.ownerReferences ?? []), { ...this.opts.ownerRef }]);
  }

  private release<T extends KubeObject>(type: ResourceType, obj: T): Promise<T> {
    const rest = (obj.metadata.ownerReferences ?? []).filter((r) => r.uid !== this.opts.owner.metadata.uid);
    return this.writeOwnerReferences(type, obj, rest);
  }

  private writeOwnerReferences<T extends KubeObject>(type: ResourceType, obj: T, refs: OwnerReference[]): Promise<T> {
    const { uid, resourceVersion, name, namespace } = obj.metadata;
    const patch = { metadata: { uid, resourceVersion, ownerReferences: refs.length ? refs : null } };
    return this.opts.client.patch<T>(type, name ?? '', patch, { namespace, patchType: PatchType.Merge });
  }
}

const describe = (obj: KubeObject) =>
  `${obj.metadata.namespace ? `${obj.metadata.namespace}/` : ''}${obj.metadata.name} (${obj.metadata.uid})`;
