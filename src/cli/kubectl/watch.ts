// Watching one object as kubectl's `rollout status` and `describe rollout -w` do (client-go's
// UntilWithSync): read it, then follow its watch from that resourceVersion, reading it again when
// the watch has expired (410) and watching again when the server ends the stream.
import type { KubeObject } from '../../apis/core-objects.ts';
import { isGone } from '../../runtime/errors.ts';
import type { ResourceType } from '../../runtime/resources.ts';
import { CliError, describeError, getTarget, ns, type Session, type Target } from './session.ts';

/** How long one watch request runs before the server ends it (and it is opened again). */
const WATCH_SECONDS = 300;

/**
 * Yields the object now, then each new version of it until the caller stops or `signal` aborts.
 * Its deletion ends the watch with kubectl's `object has been deleted`.
 */
export async function* watchObject<T extends KubeObject>(session: Session, target: Target, signal: AbortSignal): AsyncGenerator<T> {
  let obj = await getTarget<T>(session, target);
  yield obj;
  let resourceVersion = obj.metadata.resourceVersion;
  while (!signal.aborted) {
    try {
      for await (const ev of session.client.watch<T>(target.type, {
        namespace: ns(session, target.type),
        fieldSelector: `metadata.name=${target.name}`,
        resourceVersion,
        timeoutSeconds: WATCH_SECONDS,
        signal,
      })) {
        if (ev.type === 'ERROR') {
          if (ev.object.code !== 410) throw new CliError(ev.object.message ?? 'watch failed');
          resourceVersion = undefined;
          break;
        }
        if (ev.type === 'DELETED') throw new CliError('object has been deleted');
        if (ev.type === 'BOOKMARK') continue;
        resourceVersion = ev.object.metadata.resourceVersion;
        yield ev.object;
      }
    } catch (err) {
      if (signal.aborted) return;
      if (err instanceof CliError) throw err;
      if (!isGone(err)) throw new CliError(describeError(err, target));
      resourceVersion = undefined;
    }
    if (resourceVersion === undefined && !signal.aborted) {
      obj = await getTarget<T>(session, target);
      resourceVersion = obj.metadata.resourceVersion;
      yield obj;
    }
  }
}

/** The label-selected objects' changes, for redrawing views that show them (pods of a workload). */
export async function* watchChanges(
  session: Session,
  type: ResourceType,
  namespace: string | undefined,
  labelSelector: string,
  signal: AbortSignal,
): AsyncGenerator<void> {
  while (!signal.aborted) {
    try {
      const list = await session.client.list(type, { namespace, labelSelector, signal });
      for await (const ev of session.client.watch(type, {
        namespace,
        labelSelector,
        resourceVersion: list.metadata.resourceVersion,
        timeoutSeconds: WATCH_SECONDS,
        signal,
      })) {
        if (ev.type === 'ERROR') break;
        if (ev.type !== 'BOOKMARK') yield;
      }
    } catch (err) {
      if (signal.aborted) return;
      throw new CliError(describeError(err));
    }
  }
}
