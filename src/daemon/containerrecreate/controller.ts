// Executor of ContainerRecreateRequests on the daemon's node(s): one queue key per pod
// (`namespace/podName`), since a pod's CRRs run one at a time. Decisions come from state.ts; this
// file reads the runtime and the caches, kills containers and writes CRR status (subresource).
import { CRR_NODE_NAME_LABEL, CRR_POD_UID_LABEL } from '../../apis/constants.ts';
import { PatchType } from '../../runtime/client.ts';
import type { KubeObject, Pod } from '../../apis/core-objects.ts';
import { isNotFound } from '../../runtime/errors.ts';
import { Pods, ContainerRecreateRequests } from '../../runtime/resources.ts';
import { Controller, isPanic } from '../../runtime/controller.ts';
import { metaTime } from '../../util/clock.ts';
import { unwrapDeleted } from '../../runtime/store.ts';
import { newerObject, type DaemonContext, type SubController } from '../context.ts';
import { killContainer, fetchHttpGet, type HttpGet } from './kill.ts';
import {
  afterKill,
  computeContainerStates,
  isCRRFinished,
  pickCRR,
  planCRRStep,
  terminationGraceSeconds,
  unreadyGraceGate,
  isWellFormedCRR,
  INTERNAL_KILL_ERROR,
  POLL_MS,
  type CRR,
  type ContainerRecreateState,
} from './state.ts';

const POD_KEY_INDEX = 'crrPodKey';

const podKeyOf = (crr: CRR) => `${crr.metadata.namespace}/${crr.spec?.podName}`;

export function containerRecreateController(ctx: DaemonContext, opts: { httpGet?: HttpGet; workers?: number } = {}): SubController {
  const { client, scope, clock } = ctx;
  const log = ctx.logger.child({ controller: 'containerrecreate' });
  const crrInformer = ctx.informers.informerFor<KubeObject>(ContainerRecreateRequests, scope.crrSelector);
  const podInformer = ctx.informers.informerFor<Pod>(Pods, scope.podSelector);
  crrInformer.addIndexers({
    // A CRR without a pod name is invalid (the webhook refuses it); it is never picked up.
    [POD_KEY_INDEX]: (crr) => (isWellFormedCRR(crr) ? [podKeyOf(crr)] : []),
  });
  // The latest CRR this daemon wrote, so a decision never rests on a cache that has not caught up
  // with our own write (a second kill of a forceRecreate container, say).
  const written = new Map<string, CRR>();

  const controller = new Controller({
    name: 'containerrecreate',
    clock,
    logger: log,
    maxConcurrentReconciles: opts.workers ?? 4,
    reconcile: (key) => reconcile(key),
  });
  const enqueueCRR = (crr: KubeObject) => {
    if (isWellFormedCRR(crr) && scope.owns(crr.metadata.labels?.[CRR_NODE_NAME_LABEL])) controller.queue.add(podKeyOf(crr));
  };
  crrInformer.addEventHandler({
    onAdd: enqueueCRR,
    onUpdate: (_old, crr) => enqueueCRR(crr),
    onDelete: (obj) => {
      const crr = unwrapDeleted(obj);
      written.delete(crr.metadata.uid ?? '');
      enqueueCRR(crr);
    },
  });
  podInformer.addEventHandler({
    onUpdate: (_old, pod) => {
      const key = `${pod.metadata.namespace}/${pod.metadata.name}`;
      if (crrInformer.lister.byIndex(POD_KEY_INDEX, key).some((c) => isWellFormedCRR(c) && !isCRRFinished(c))) controller.queue.add(key);
    },
  });
  scope.onNodeChange(() => {
    for (const crr of crrInformer.lister.list()) if (isWellFormedCRR(crr) && !isCRRFinished(crr)) enqueueCRR(crr);
  });

  async function patchStatus(crr: CRR, status: Partial<NonNullable<CRR['status']>>): Promise<void> {
    try {
      const out = await client.patchStatus<CRR>(
        ContainerRecreateRequests,
        crr.metadata.name!,
        { status },
        { namespace: crr.metadata.namespace, patchType: PatchType.Merge },
      );
      written.set(out.metadata.uid!, out);
    } catch (err) {
      // A CRR deleted under us needs nothing more.
      if (!isNotFound(err)) throw err;
    }
  }

  async function reconcile(key: string): Promise<{ requeueAfterMs?: number } | void> {
    const cached = crrInformer.lister
      .byIndex(POD_KEY_INDEX, key)
      .filter(isWellFormedCRR)
      .filter((c) => scope.owns(c.metadata.labels?.[CRR_NODE_NAME_LABEL]));
    const crrs = cached.map((c) => newerObject(c, written.get(c.metadata.uid ?? ''))!);
    const { picked, toPending } = pickCRR(crrs);
    for (const crr of toPending) await patchStatus(crr, { phase: 'Pending' });
    if (!picked) return;
    const crr = picked;
    const nodeName = crr.metadata.labels![CRR_NODE_NAME_LABEL]!;
    const runtime = scope.runtimeFor(nodeName);
    if (!runtime) return { requeueAfterMs: POLL_MS };
    if (crr.status?.phase !== 'Recreating') {
      await patchStatus(crr, { phase: 'Recreating' });
      return { requeueAfterMs: 1 };
    }
    const gate = unreadyGraceGate(crr, clock.now());
    if (gate.wait) {
      log.debug({ crr: crr.metadata.name, reason: gate.reason }, 'CRR waiting');
      return gate.requeueAfterMs ? { requeueAfterMs: gate.requeueAfterMs } : undefined;
    }
    const pod = podInformer.lister.get(crr.metadata.namespace!, crr.spec.podName);
    const podUID = crr.metadata.labels?.[CRR_POD_UID_LABEL] ?? pod?.metadata.uid ?? '';
    const containers = await runtime.podContainers({ uid: podUID, namespace: crr.metadata.namespace!, name: crr.spec.podName });
    const step = planCRRStep(
      crr,
      computeContainerStates(crr, containers, clock.now(), pod?.spec?.restartPolicy),
      new Set(containers.map((c) => c.name)),
    );
    if (step.kind === 'wait') return { requeueAfterMs: step.requeueAfterMs };
    if (step.kind === 'complete') {
      log.info({ crr: crr.metadata.name, states: step.states }, 'CRR completed');
      await patchStatus(crr, {
        phase: 'Completed',
        completionTime: metaTime(clock.now()),
        message: step.message,
        containerRecreateStates: step.states,
      });
      return;
    }
    let states: ContainerRecreateState[] = step.states;
    const target = containers.find((c) => c.name === step.kill);
    const spec = crr.spec.containers.find((c) => c.name === step.kill);
    if (target && spec) {
      let error: string | undefined;
      try {
        const preStop = await killContainer(
          {
            containerID: target.containerID,
            containerName: spec.name,
            preStop: spec.preStop,
            ports: spec.ports,
            podIP: pod?.status?.podIP,
            graceSeconds: terminationGraceSeconds(crr, pod?.spec?.terminationGracePeriodSeconds),
          },
          { runtime, clock, httpGet: opts.httpGet ?? fetchHttpGet },
        );
        if (preStop && !preStop.ok && pod) {
          ctx.recorder.event(
            pod,
            'Warning',
            'FailedPreStopHook',
            'PreStop',
            `PreStop hook for container ${spec.name} failed: ${preStop.message}`,
          );
        }
        log.info({ crr: crr.metadata.name, container: spec.name, preStop }, 'container killed for CRR');
      } catch (err) {
        // The runtime's reason is the user's to read; a fault of our own is not (its stack is logged).
        if (isPanic(err)) {
          error = INTERNAL_KILL_ERROR;
          log.error({ crr: crr.metadata.name, container: spec.name, err }, 'internal error while killing container for CRR');
        } else {
          error = (err as Error).message;
          log.warn({ crr: crr.metadata.name, container: spec.name, err }, 'failed to kill container for CRR');
        }
      }
      states = afterKill(states, spec.name, error);
    }
    await patchStatus(crr, { containerRecreateStates: states });
    return { requeueAfterMs: step.requeueAfterMs };
  }

  return {
    name: 'containerrecreate',
    start: () => controller.start(),
    stop: () => controller.stop(),
  };
}
