// Kruise Rollout's Rollout objects (rollouts.kruise.io v1beta1 / v1alpha1) as kruise-tools acts on
// them: `rollout approve` (a paused step goes on), `rollout undo --fast` (back to the previous step
// with no traffic and the most replicas), `rollout undo rollout/NAME` (undoes its workload) and
// `describe rollout [-w]`. The pure parts (what each verb writes, the description) are functions of
// the object; the commands read and write through the Rollout's status subresource, as kruise-tools.
import { Command, Option } from 'commander';
import type { Pod, KubeObject } from '../../apis/core-objects.ts';
import { Pods } from '../../runtime/resources.ts';
import { getScaledValueFromIntOrPercent, type IntOrString } from '../../util/intstr.ts';
import { age } from './get.ts';
import { withSession } from './program.ts';
import {
  CliError,
  cliIO,
  describeError,
  getTarget,
  KruiseRollouts,
  pluralName,
  printResult,
  resolveType,
  servedType,
  type DryRun,
  type OutputFormat,
  type Session,
  type Target,
} from './session.ts';
import { watchObject } from './watch.ts';

export const STEP_PAUSED = 'StepPaused';
const STEP_READY = 'StepReady';

interface RolloutStep {
  replicas?: IntOrString;
  traffic?: string;
  weight?: number;
  matches?: Array<{ headers?: Array<{ name?: string; value?: string; type?: string }> }>;
}

interface StepStatus {
  currentStepIndex?: number;
  currentStepState?: string;
  nextStepIndex?: number;
  stableRevision?: string;
  canaryRevision?: string;
  updatedRevision?: string;
  podTemplateHash?: string;
}

interface WorkloadRef {
  apiVersion?: string;
  kind?: string;
  name?: string;
}

/** The fields of a Rollout (either version) these verbs read. */
export interface Rollout extends KubeObject {
  spec?: {
    workloadRef?: WorkloadRef;
    objectRef?: { workloadRef?: WorkloadRef };
    strategy?: {
      paused?: boolean;
      canary?: { steps?: RolloutStep[]; enableExtraWorkloadForCanary?: boolean; trafficRoutings?: unknown[] };
      blueGreen?: { steps?: RolloutStep[]; trafficRoutings?: unknown[] };
    };
  };
  status?: {
    phase?: string;
    message?: string;
    observedGeneration?: number;
    currentStepIndex?: number;
    currentStepState?: string;
    canaryStatus?: StepStatus;
    blueGreenStatus?: StepStatus;
  };
}

const isV1beta1 = (r: Rollout) => r.apiVersion === `${KruiseRollouts.group}/v1beta1`;

/** The status merge patch `rollout approve` writes: the paused step of the canary or blue-green release goes on. */
export function approvePatch(r: Rollout): object {
  const status = r.status ?? {};
  if (!isV1beta1(r)) {
    if (status.canaryStatus?.currentStepState !== STEP_PAUSED) {
      throw new CliError("does not allow to approve, because current canary state is not 'StepPaused'");
    }
    return { status: { canaryStatus: { currentStepState: STEP_READY } } };
  }
  if (status.canaryStatus) {
    if (status.canaryStatus.currentStepState !== STEP_PAUSED)
      throw new CliError(`does not allow to approve, because current canary state is not '${STEP_PAUSED}'`);
    return { status: { canaryStatus: { currentStepState: STEP_READY } } };
  }
  if (status.blueGreenStatus) {
    if (status.blueGreenStatus.currentStepState !== STEP_PAUSED)
      throw new CliError(`does not allow to approve, because current blue-green state is not '${STEP_PAUSED}'`);
    return { status: { blueGreenStatus: { currentStepState: STEP_READY } } };
  }
  throw new CliError('no need to approve: not in canary or blue-green progress');
}

const stepsOf = (r: Rollout): RolloutStep[] =>
  (r.spec?.strategy?.canary ? r.spec.strategy.canary.steps : r.spec?.strategy?.blueGreen?.steps) ?? [];

const hasTraffic = (step: RolloutStep) => step.traffic !== undefined && getScaledValueFromIntOrPercent(step.traffic, 100, true) !== 0;

/**
 * The status merge patch `rollout undo --fast` writes (v1beta1 only): the next step becomes the
 * previous step without traffic that has the most replicas, so a blue-green (or canary) release
 * goes back to where the new version takes no traffic.
 */
export function fastRollbackPatch(r: Rollout): object {
  if (!isV1beta1(r)) throw new CliError('rollback is not supported on given object');
  const steps = stepsOf(r);
  const current = r.status?.currentStepIndex ?? 0;
  if (steps.length < current) throw new CliError(`has ${steps.length} steps, but current step is too large ${current}`);
  if (current <= 1) throw new CliError('already at the first step');
  let target = -1;
  let most = 0;
  for (let i = current - 2; i >= 0; i--) {
    const step = steps[i]!;
    if (hasTraffic(step)) continue;
    const replicas = step.replicas === undefined ? 0 : getScaledValueFromIntOrPercent(step.replicas, 100, true);
    if (replicas > most) {
      most = replicas;
      target = i + 1;
    }
  }
  if (target === -1) throw new CliError('no previous step with no traffic found');
  return r.spec?.strategy?.blueGreen
    ? { status: { blueGreenStatus: { nextStepIndex: target } } }
    : { status: { canaryStatus: { nextStepIndex: target } } };
}

/** The workload a Rollout releases (v1beta1 spec.workloadRef, v1alpha1 spec.objectRef.workloadRef) as a target. */
export function workloadOf(r: Rollout): Target {
  const ref = r.spec?.workloadRef ?? r.spec?.objectRef?.workloadRef;
  if (!ref?.kind || !ref.name) throw new CliError(`rollout ${r.metadata.name} has no workloadRef`);
  const group = ref.apiVersion?.includes('/') ? ref.apiVersion.split('/')[0]! : '';
  return { type: resolveType(group ? `${ref.kind.toLowerCase()}s.${group}` : ref.kind), name: ref.name };
}

/** Whether a merge patch changes nothing of the object (kruise-tools prints "already …" then). */
function patchIsNoop(obj: unknown, patch: unknown): boolean {
  if (patch === null || typeof patch !== 'object') return obj === patch;
  const o = (obj ?? {}) as Record<string, unknown>;
  return Object.entries(patch).every(([k, v]) => patchIsNoop(o[k], v));
}

/**
 * Reads the Rollout, computes the status patch and writes it (PATCH …/status), printing
 * `rollout.rollouts.kruise.io/NAME <verb>` or `<already>`; a refusal names the object as kubectl does.
 */
export async function patchRolloutStatus(
  session: Session,
  target: Target,
  patchOf: (r: Rollout) => object,
  o: { verb: string; already: string; output: OutputFormat; dryRun: DryRun },
): Promise<void> {
  const rollout = await getTarget<Rollout>(session, target);
  let patch: object;
  try {
    patch = patchOf(rollout);
  } catch (err) {
    throw new CliError(`${pluralName(target.type)} "${target.name}" ${describeError(err)}`);
  }
  if (patchIsNoop(rollout, patch)) return printResult(rollout, target.type, o.output, o.already);
  if (o.dryRun === 'client') return printResult(rollout, target.type, o.output, o.verb, o.dryRun);
  const type = await servedType(session, target.type);
  try {
    const written = await session.client.patch<Rollout>(type, target.name, patch, {
      namespace: session.namespace,
      patchType: 'application/merge-patch+json',
      subresource: 'status',
      dryRun: o.dryRun === 'server',
    });
    printResult(written, target.type, o.output, o.verb, o.dryRun);
  } catch (err) {
    throw new CliError(`failed to patch: ${describeError(err, target)}`);
  }
}

// ---------------------------------------------------------------------------------------------
// describe rollout

/** What describe shows of the workload: kruise-tools' images, replicas and pods of the current batch. */
export interface WorkloadView {
  images: string[];
  replicas: { desired: number; current: number; updated: number; ready: number; available: number };
  pods: Pod[];
}

const TABLE_FORMAT = (label: string, value: unknown) => `${label.padEnd(19)}${String(value)}`;

const GREEN = '\x1b[32m';
const RESET = '\x1b[0m';

function icon(phase: string, color: boolean): string {
  if (!color || !phase) return '';
  if (['Healthy', 'Running'].includes(phase)) return `${GREEN}✔${RESET}`;
  if (['Progressing', 'Pending', 'Initial'].includes(phase)) return '\x1b[33m⚠\x1b[0m';
  if (['Disabled', 'Unknown', 'Terminating', 'Disabling', 'Failed'].includes(phase)) return '\x1b[31m✘\x1b[0m';
  return '';
}

/** The step status of the release in progress (blue-green or canary), as kruise-tools reads it. */
function stepStatusOf(r: Rollout): StepStatus {
  return (r.spec?.strategy?.blueGreen ? r.status?.blueGreenStatus : r.status?.canaryStatus) ?? {};
}

/** The labels selecting the pods describe lists: the stable revision's, of the current batch unless `all`. */
export function podSelectorOf(r: Rollout, workloadKind: string, all: boolean): string {
  const st = stepStatusOf(r);
  const label = workloadKind === 'Deployment' ? 'pod-template-hash' : 'controller-revision-hash';
  const selectors = [`${label}=${st.podTemplateHash || st.stableRevision || ''}`];
  if (!all && st.currentStepIndex) selectors.push(`rollouts.kruise.io/rollout-batch-id=${st.currentStepIndex}`);
  return selectors.join(',');
}

/** kruise-tools' `describe rollout` text: status, strategy steps (the current one marked), images, revisions, replicas, pods. */
export function describeRollout(r: Rollout, workload: WorkloadView | string, o: { color: boolean; nowMs: number }): string {
  const out: string[] = [];
  const st = stepStatusOf(r);
  const strategy = r.spec?.strategy?.canary ? 'Canary' : r.spec?.strategy?.blueGreen ? 'BlueGreen' : '';
  const observed = (r.status?.observedGeneration ?? 0) === (r.metadata.generation ?? 0);
  out.push(TABLE_FORMAT('Name:', r.metadata.name), TABLE_FORMAT('Namespace:', r.metadata.namespace));
  const phase = r.status?.phase ?? '';
  if (observed) {
    out.push(TABLE_FORMAT('Status:', `${icon(phase, o.color)} ${phase}`));
    if (r.status?.message) out.push(TABLE_FORMAT('Message:', r.status.message));
  }
  out.push(TABLE_FORMAT('Strategy:', strategy));
  if (strategy) {
    const steps = stepsOf(r);
    out.push(TABLE_FORMAT(' Step:', `${st.currentStepIndex ?? 0}/${steps.length}`), ' Steps:');
    steps.forEach((step, i) => {
      const current = i + 1 === st.currentStepIndex;
      const lines: string[] = [];
      if (step.replicas !== undefined) lines.push(TABLE_FORMAT('  -  Replicas: ', step.replicas));
      const traffic = step.traffic ?? (step.weight !== undefined ? `${step.weight}%` : undefined);
      if (traffic !== undefined) lines.push(TABLE_FORMAT('     Traffic: ', traffic));
      for (const match of step.matches ?? []) {
        lines.push('     Matches: ', '      - Headers: ');
        for (const h of match.headers ?? [])
          lines.push(
            TABLE_FORMAT('       - Name:', h.name),
            TABLE_FORMAT('         Value:', h.value),
            TABLE_FORMAT('         Type:', h.type),
          );
      }
      if (current) lines.push(TABLE_FORMAT('     State:', st.currentStepState ?? ''));
      if (current && o.color && lines.length) {
        lines[0] = GREEN + lines[0];
        lines[lines.length - 1] += RESET;
      }
      out.push(...lines);
    });
  }
  if (typeof workload === 'string') {
    out.push(`Error getting resources: ${workload}`);
    return out.join('\n');
  }
  workload.images.forEach((image, i) => out.push(TABLE_FORMAT(i === 0 ? 'Images:' : '', image)));
  out.push(TABLE_FORMAT('Current Revision:', st.stableRevision ?? ''));
  out.push(TABLE_FORMAT('Update Revision:', st.updatedRevision || st.canaryRevision || ''));
  if (observed) {
    const rep = workload.replicas;
    out.push(
      'Replicas:',
      TABLE_FORMAT(' Desired:', rep.desired),
      TABLE_FORMAT(' Updated:', rep.updated),
      TABLE_FORMAT(' Current:', rep.current),
      TABLE_FORMAT(' Ready:', rep.ready),
      TABLE_FORMAT(' Available:', rep.available),
    );
  }
  if (workload.pods.length > 0) {
    const rows = workload.pods.map((p) => {
      const statuses = p.status?.containerStatuses ?? [];
      const phase = p.metadata.deletionTimestamp ? 'Terminating' : (p.status?.phase ?? '');
      return [
        p.metadata.name ?? '',
        `${statuses.filter((c) => c.ready).length}/${p.spec?.containers?.length ?? 0}`,
        p.metadata.labels?.['rollouts.kruise.io/rollout-batch-id'] ?? '',
        p.metadata.labels?.['pod-template-hash'] || p.metadata.labels?.['controller-revision-hash'] || '',
        age(p.metadata.creationTimestamp, o.nowMs),
        String(statuses.reduce((n, c) => n + (c.restartCount ?? 0), 0)),
        `${icon(phase, o.color)} ${phase}`,
      ];
    });
    const header = ['NAME', 'READY', 'BATCH ID', 'REVISION', 'AGE', 'RESTARTS', 'STATUS'];
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
    for (const row of [header, ...rows]) out.push(row.map((c, i) => (i === row.length - 1 ? c : c.padEnd(widths[i]! + 2))).join(''));
  }
  return out.join('\n');
}

interface WorkloadObject extends KubeObject {
  spec?: { replicas?: number; template?: { spec?: { containers?: Array<{ image?: string }> } } };
  status?: {
    replicas?: number;
    updatedReplicas?: number;
    readyReplicas?: number;
    availableReplicas?: number;
    desiredNumberScheduled?: number;
    currentNumberScheduled?: number;
    updatedNumberScheduled?: number;
    numberReady?: number;
    numberAvailable?: number;
  };
}

async function workloadView(session: Session, r: Rollout, all: boolean): Promise<WorkloadView | string> {
  try {
    const target = workloadOf(r);
    const w = await getTarget<WorkloadObject>(session, target);
    const s = w.status ?? {};
    const daemon = target.type.kind === 'DaemonSet';
    const pods = (
      await session.client.list<Pod>(Pods, { namespace: session.namespace, labelSelector: podSelectorOf(r, target.type.kind, all) })
    ).items;
    const ready = (p: Pod) => (p.status?.containerStatuses ?? []).filter((c) => c.ready).length;
    pods.sort((a, b) => {
      const ba = a.metadata.labels?.['rollouts.kruise.io/rollout-batch-id'] ?? '';
      const bb = b.metadata.labels?.['rollouts.kruise.io/rollout-batch-id'] ?? '';
      return ba !== bb ? (ba < bb ? -1 : 1) : ready(b) - ready(a);
    });
    return {
      images: (w.spec?.template?.spec?.containers ?? []).map((c) => c.image ?? ''),
      replicas: {
        desired: daemon ? (s.desiredNumberScheduled ?? 0) : (w.spec?.replicas ?? 1),
        current: daemon ? (s.currentNumberScheduled ?? 0) : (s.replicas ?? 0),
        updated: daemon ? (s.updatedNumberScheduled ?? 0) : (s.updatedReplicas ?? 0),
        ready: daemon ? (s.numberReady ?? 0) : (s.readyReplicas ?? 0),
        available: daemon ? (s.numberAvailable ?? 0) : (s.availableReplicas ?? 0),
      },
      pods,
    };
  } catch (err) {
    return describeError(err);
  }
}

/** `describe rollout NAME [-w] [--timeout N] [--all] [--no-color]` (kruise-tools' describe's only subcommand). */
export function describeRolloutCommand(): Command {
  return new Command('rollout')
    .aliases(['rollouts', 'ro'])
    .description('details of a Kruise Rollout: status, steps (the current one marked), images, revisions, replicas and pods')
    .argument('<name>', 'the Rollout')
    .option('-w, --watch', 'watch for changes to the rollout (redrawn on each change)')
    .option('--no-color', 'print output without color (the default when not on a terminal)')
    .addOption(new Option('--timeout <seconds>', 'end the watch after this many seconds (0: never)').default('0'))
    .option('--all', 'show all pods of the stable revision, not only those of the current batch')
    .action(async function (this: Command, name: string) {
      await withSession(this, async (session, opts) => {
        const target: Target = { type: KruiseRollouts, name };
        const color = opts.color !== false && cliIO().isTTY;
        const render = async (r: Rollout) => describeRollout(r, await workloadView(session, r, !!opts.all), { color, nowMs: Date.now() });
        if (!opts.watch) {
          cliIO().out(`${await render(await getTarget<Rollout>(session, target))}\n`);
          return;
        }
        const abort = new AbortController();
        const seconds = Number(opts.timeout);
        const timer = seconds > 0 ? setTimeout(() => abort.abort(), seconds * 1000) : undefined;
        try {
          for await (const r of watchObject<Rollout>(session, target, abort.signal)) {
            const text = await render(r);
            cliIO().out(cliIO().isTTY ? `\x1b[2J\x1b[H${text}\n` : `${text}\n\n`);
          }
        } finally {
          clearTimeout(timer);
          abort.abort();
        }
        if (abort.signal.aborted && seconds > 0) throw new CliError('context deadline exceeded');
      });
    });
}
