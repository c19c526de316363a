// `kubectl kruise rollout status|history|undo|pause|resume|restart|plan` (kruise-tools' rollout
// group, behaviour spec §23) for CloneSet, Advanced StatefulSet/DaemonSet and the native
// Deployment/StatefulSet/DaemonSet.
import { Command, Option } from 'commander';
import { stringify as toYaml } from 'yaml';
import { RESTARTED_AT_ANNOTATION } from '../../apis/constants.ts';
import type { PodTemplateSpec } from '../../apis/core.ts';
import type { KubeObject } from '../../apis/core-objects.ts';
import { metaTime } from '../../util/clock.ts';
import { labelSelectorToString } from '../../util/labelselector.ts';
import { Pods } from '../../runtime/resources.ts';
import { revisionsOf, rollbackTarget, sameTemplate, type Revision } from './history.ts';
import { renderFrame, podsOfWorkload, type Frame } from './liveview.ts';
import { planCommand } from './plan-command.ts';
import { approvePatch, fastRollbackPatch, patchRolloutStatus, workloadOf, type Rollout } from './kruise-rollout.ts';
import {
  CliError,
  cliIO,
  getTarget,
  isKruise,
  mutate,
  parseDryRun,
  parseOutput,
  parseTarget,
  parseTargets,
  pluralName,
  printData,
  KruiseRollouts,
  table,
  typeName,
  write,
  type DryRun,
  type OutputFormat,
  type Session,
  type Target,
} from './session.ts';
import { rolloutStatus, type Workload } from './status.ts';
import { withSession } from './program.ts';
import { watchChanges, watchObject } from './watch.ts';

interface TemplateWorkload extends KubeObject {
  spec?: {
    paused?: boolean;
    template?: PodTemplateSpec;
    updateStrategy?: { rollingUpdate?: { paused?: boolean } };
  };
}

const dryRunOption = () =>
  new Option(
    '--dry-run [strategy]',
    'must be "none", "server", or "client": only print (client) or only validate (server) the change',
  ).default('none');
const outputOption = () => new Option('-o, --output <format>', 'output format: json|yaml|name');

export function rolloutCommand(): Command {
  const rollout = new Command('rollout').description(
    'manage the rollout of a CloneSet, Advanced StatefulSet/DaemonSet, Deployment, StatefulSet or DaemonSet',
  );
  rollout.addCommand(statusCommand());
  rollout.addCommand(historyCommand());
  rollout.addCommand(undoCommand());
  rollout.addCommand(pauseResumeCommand('pause'));
  rollout.addCommand(pauseResumeCommand('resume'));
  rollout.addCommand(restartCommand());
  rollout.addCommand(planCommand());
  rollout.addCommand(approveCommand());
  return rollout;
}

/** kubectl durations: 0 (forever), 30s, 5m, 1h30m, 500ms. */
export function parseDuration(value: string): number {
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h)/g;
  let ms = 0;
  let consumed = 0;
  for (const m of value.matchAll(re)) {
    ms += Number(m[1]) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] as 'ms' | 's' | 'm' | 'h'];
    consumed += m[0].length;
  }
  if (consumed !== value.length || value === '') throw new CliError(`invalid duration "${value}" (examples: 30s, 5m, 1h)`);
  return ms;
}

const parseBool = (v: string | boolean) => v === true || v === 'true';

function statusCommand(): Command {
  return new Command('status')
    .description("show the status of the rollout; by default watches it until it's done (--watch=false to look once)")
    .argument('<resource...>', 'TYPE/NAME or TYPE NAME')
    .option('-w, --watch [bool]', 'watch the status of the rollout until it is done', parseBool, true)
    .option('--timeout <duration>', 'how long to wait before ending the watch (0 means never), e.g. 1s, 2m, 3h', '0s')
    .option('--live', 'draw the live view (progress, budget, per-pod state) even when the output is not a terminal')
    .option('--plain', 'print the status messages only, also on a terminal')
    .addOption(new Option('-o, --output <format>', 'json: one JSON object per status change, for scripts'))
    .action(async function (this: Command, args: string[]) {
      await withSession(this, async (session, opts) => {
        const target = parseTarget(args);
        const output = parseOutput(opts.output, ['json']);
        const timeoutMs = parseDuration(String(opts.timeout));
        const live = !output && !opts.plain && (opts.live || cliIO().isTTY);
        await watchStatus(session, target, {
          watch: opts.watch,
          timeoutMs,
          live: !!live,
          json: output === 'json',
          redraw: cliIO().isTTY,
        });
      });
    });
}

interface WatchOptions {
  watch: boolean;
  timeoutMs: number;
  live: boolean;
  json: boolean;
  /** Redraw the live view in place (a terminal) instead of printing frame after frame. */
  redraw: boolean;
}

/** Wakes one waiter; a notification with nobody waiting is kept for the next wait. */
class Wakeup {
  private pending = false;
  private resolve: (() => void) | undefined;
  notify(): void {
    const resolve = this.resolve;
    this.resolve = undefined;
    if (resolve) resolve();
    else this.pending = true;
  }
  wait(): Promise<void> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => (this.resolve = resolve));
  }
}

/**
 * Prints the status of each new version of the object as kubectl does: the object is watched, not
 * polled (the live view also follows its pods' changes), until done, the timeout or an error.
 */
async function watchStatus(session: Session, target: Target, o: WatchOptions): Promise<void> {
  type Observed = Workload & KubeObject;
  const abort = new AbortController();
  const wakeup = new Wakeup();
  const timer = o.timeoutMs > 0 ? setTimeout(() => (abort.abort(), wakeup.notify()), o.timeoutMs) : undefined;
  let latest: Observed | undefined;
  let failure: unknown;
  let podsWatched = false;
  const follow = async (changes: AsyncIterable<unknown>, take: (x: unknown) => void) => {
    try {
      for await (const x of changes) {
        take(x);
        wakeup.notify();
      }
    } catch (err) {
      failure ??= err;
      wakeup.notify();
    }
  };
  let lastMessage = '';
  let lastFrame = '';
  let drawnLines = 0;
  try {
    if (o.watch) void follow(watchObject<Observed>(session, target, abort.signal), (obj) => (latest = obj as Observed));
    else latest = await getTarget<Observed>(session, target);
    for (;;) {
      if (o.watch) await wakeup.wait();
      if (failure) throw failure;
      if (abort.signal.aborted) throw new CliError('timed out waiting for the condition');
      const obj = latest;
      if (!obj) continue;
      if (o.live && o.watch && !podsWatched && obj.spec?.selector) {
        podsWatched = true;
        const selector = labelSelectorToString(obj.spec.selector);
        void follow(watchChanges(session, Pods, obj.metadata.namespace, selector, abort.signal), () => undefined);
      }
      const status = rolloutStatus(target.type, obj);
      if (o.json) {
        const line = JSON.stringify({
          kind: target.type.kind,
          name: target.name,
          message: status.message,
          done: status.done,
          status: obj.status,
        });
        if (status.message !== lastMessage || status.done) write(line);
      } else if (o.live) {
        const frame: Frame = { type: target.type, workload: obj, pods: await podsOfWorkload(session, obj), status, nowMs: Date.now() };
        const text = renderFrame(frame, cliIO().columns || 100);
        if (o.redraw) {
          if (drawnLines > 0) cliIO().out(`\x1b[${drawnLines}F\x1b[J`);
          cliIO().out(`${text}\n`);
          drawnLines = text.split('\n').length;
        } else if (text !== lastFrame) {
          write(`${text}\n`);
        }
        lastFrame = text;
      } else if (status.message !== lastMessage) {
        write(status.message);
      }
      lastMessage = status.message;
      if (status.done || !o.watch) return;
    }
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
}

function historyCommand(): Command {
  return new Command('history')
    .description('view previous rollout revisions and configurations')
    .argument('<resource...>', 'TYPE/NAME or TYPE NAME')
    .option('--revision <n>', 'see the details, including the pod template, of the revision specified', '0')
    .addOption(outputOption())
    .action(async function (this: Command, args: string[]) {
      await withSession(this, async (session, opts) => {
        const output = parseOutput(opts.output);
        for (const target of parseTargets(args)) {
          const obj = await getTarget<KubeObject>(session, target);
          const revisions = await revisionsOf(session, target.type, obj);
          const wanted = Number(opts.revision);
          if (wanted > 0) {
            const r = revisions.find((x) => x.revision === wanted);
            if (!r) throw new CliError(`unable to find the specified revision ${wanted} of ${typeName(target.type)}/${target.name}`);
            if (printData(r, output)) continue;
            write(`${typeName(target.type)}/${target.name} with revision #${r.revision}\nPod Template:\n${indent(toYaml(r.template))}`);
            continue;
          }
          if (printData(revisions, output)) continue;
          write(
            `${typeName(target.type)}/${target.name} \n${table([['REVISION', 'CHANGE-CAUSE'], ...revisions.map((r) => [String(r.revision), r.changeCause ?? '<none>'])])}\n`,
          );
        }
      });
    });
}

const indent = (text: string) =>
  text
    .trimEnd()
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n');

function undoCommand(): Command {
  return new Command('undo')
    .description('roll back to a previous rollout revision (the template recorded in the revision)')
    .argument('<resource...>', 'TYPE/NAME or TYPE NAME')
    .option('--to-revision <n>', 'the revision to roll back to; 0 means the previous one', '0')
    .option(
      '--fast',
      "Kruise Rollout: back to the previous step with no traffic and the most replicas (a blue-green release's fast rollback)",
    )
    .addOption(dryRunOption())
    .addOption(outputOption())
    .action(async function (this: Command, args: string[]) {
      await withSession(this, async (session, opts) => {
        const output = parseOutput(opts.output);
        const dryRun = parseDryRun(opts.dryRun);
        if (opts.fast) {
          for (const target of parseTargets(args)) {
            if (target.type !== KruiseRollouts)
              throw new CliError(`${pluralName(target.type)} "${target.name}" rollback is not supported on given object`);
            await patchRolloutStatus(session, target, fastRollbackPatch, {
              verb: 'rolled back',
              already: 'already rolled back',
              output,
              dryRun,
            });
          }
          return;
        }
        // A Rollout stands for the workload it releases; each workload is rolled back once (kruise-tools).
        const seen = new Set<string>();
        for (const named of parseTargets(args)) {
          const target = named.type === KruiseRollouts ? workloadOf(await getTarget<Rollout>(session, named)) : named;
          const key = `${pluralName(target.type)}/${target.name}`;
          if (seen.has(key)) continue;
          seen.add(key);
          const obj = await getTarget<TemplateWorkload>(session, target);
          const to: Revision = rollbackTarget(await revisionsOf(session, target.type, obj), Number(opts.toRevision));
          await mutate<TemplateWorkload>(
            session,
            target,
            (o) => {
              if (target.type.kind === 'Deployment' && o.spec?.paused) {
                throw new CliError(
                  `you cannot rollback a paused deployment; resume it first with 'kubectl kruise rollout resume deployment/${target.name}' and try again`,
                );
              }
              if (sameTemplate(o.spec?.template, to.template)) return false;
              o.spec = { ...o.spec, template: to.template };
            },
            {
              dryRun,
              output,
              verb: 'rolled back',
              unchangedVerb: `skipped rollback (current template already matches revision ${to.revision})`,
            },
          );
        }
      });
    });
}

type Pausable = 'pause' | 'resume';

/** Where a kind keeps "paused": Deployment spec.paused, Kruise workloads updateStrategy.rollingUpdate.paused. */
function pausedField(target: Target): { get(o: TemplateWorkload): boolean; set(o: TemplateWorkload, v: boolean): void } {
  if (target.type.kind === 'Deployment' && target.type.group === 'apps') {
    return { get: (o) => !!o.spec?.paused, set: (o, v) => void (o.spec = { ...o.spec, paused: v }) };
  }
  if (isKruise(target.type) && ['CloneSet', 'StatefulSet', 'DaemonSet'].includes(target.type.kind)) {
    return {
      get: (o) => !!o.spec?.updateStrategy?.rollingUpdate?.paused,
      set: (o, v) => {
        const strategy = o.spec?.updateStrategy ?? {};
        o.spec = { ...o.spec, updateStrategy: { ...strategy, rollingUpdate: { ...strategy.rollingUpdate, paused: v } } };
      },
    };
  }
  if (target.type === KruiseRollouts) {
    return {
      get: (o) => !!(o as Rollout).spec?.strategy?.paused,
      set: (o, v) => {
        const r = o as Rollout;
        r.spec = { ...r.spec, strategy: { ...r.spec?.strategy, paused: v } };
      },
    };
  }
  return {
    get: () => {
      throw new CliError(
        `${target.type.resource}${target.type.group ? `.${target.type.group}` : ''} "${target.name}" pausing is not supported`,
      );
    },
    set: () => undefined,
  };
}

/** A verb acting on each TYPE/NAME it is given, with --dry-run and -o. */
function targetsCommand(
  name: string,
  description: string,
  argument: string,
  act: (session: Session, target: Target, opts: { output: OutputFormat; dryRun: DryRun }) => Promise<void>,
): Command {
  return new Command(name)
    .description(description)
    .argument('<resource...>', argument)
    .addOption(dryRunOption())
    .addOption(outputOption())
    .action(async function (this: Command, args: string[]) {
      await withSession(this, async (session, opts) => {
        const output = parseOutput(opts.output);
        const dryRun = parseDryRun(opts.dryRun);
        for (const target of parseTargets(args)) await act(session, target, { output, dryRun });
      });
    });
}

function pauseResumeCommand(verb: Pausable): Command {
  const pause = verb === 'pause';
  return targetsCommand(
    verb,
    pause ? 'mark the resource as paused: the controller stops updating its pods' : 'resume a paused resource',
    'TYPE/NAME or TYPE NAME',
    async (session, target, { output, dryRun }) => {
      const field = pausedField(target);
      await mutate<TemplateWorkload>(
        session,
        target,
        (o) => {
          if (field.get(o) === pause) return false;
          field.set(o, pause);
        },
        { dryRun, output, verb: pause ? 'paused' : 'resumed', unchangedVerb: pause ? 'already paused' : 'already resumed' },
      );
    },
  );
}

const RESTARTABLE = new Set(['Deployment', 'StatefulSet', 'DaemonSet', 'CloneSet']);

function restartCommand(): Command {
  return targetsCommand(
    'restart',
    `restart a resource: sets the pod template annotation ${RESTARTED_AT_ANNOTATION}, so every pod is replaced`,
    'TYPE/NAME or TYPE NAME',
    async (session, target, { output, dryRun }) => {
      if (!RESTARTABLE.has(target.type.kind)) throw new CliError(`restarting is not supported for ${target.type.kind} ${target.name}`);
      await mutate<TemplateWorkload>(
        session,
        target,
        (o) => {
          if (target.type.kind === 'Deployment' && o.spec?.paused) {
            throw new CliError(`can't restart paused deployment (run rollout resume first)`);
          }
          const template = o.spec?.template ?? {};
          const annotations = { ...template.metadata?.annotations, [RESTARTED_AT_ANNOTATION]: metaTime(Date.now()) };
          o.spec = { ...o.spec, template: { ...template, metadata: { ...template.metadata, annotations } } };
        },
        { dryRun, output, verb: 'restarted' },
      );
    },
  );
}

function approveCommand(): Command {
  return targetsCommand(
    'approve',
    'Kruise Rollout: approve the paused step of a canary or blue-green release (rollout/NAME), so it goes on',
    'rollout/NAME or rollout NAME',
    async (session, target, { output, dryRun }) => {
      if (target.type !== KruiseRollouts) throw new CliError(`${pluralName(target.type)} "${target.name}" approving is not supported`);
      await patchRolloutStatus(session, target, approvePatch, { verb: 'approved', already: 'already approved', output, dryRun });
    },
  );
}
