// `kubectl kruise describe`, `expose` and `exec -S/--sidecar`.
import { Command } from 'commander';
import { spawn } from 'node:child_process';
import { stringify as toYaml } from 'yaml';
import type { Pod, KubeObject } from '../../apis/core-objects.ts';
import { Events, Pods } from '../../runtime/resources.ts';
import { labelSelectorToString, type LabelSelectorLike } from '../../util/labelselector.ts';
import { compareActivePods } from '../../util/pod.ts';
import { describeRolloutCommand } from './kruise-rollout.ts';
import { podsOfWorkload, renderFrame } from './liveview.ts';
import { withSession } from './program.ts';
import {
  CliError,
  cliIO,
  isProcessIO,
  describeError,
  getTarget,
  ns,
  parseDryRun,
  parseOutput,
  parseTarget,
  printResult,
  resolveType,
  table,
  typeName,
  write,
  type Session,
} from './session.ts';
import { rolloutStatus, type Workload } from './status.ts';

const WORKLOAD_KINDS = new Set(['CloneSet', 'StatefulSet', 'DaemonSet', 'Deployment']);

export function describeCommand(): Command {
  const describe = new Command('describe')
    .description('show details of a workload: spec summary, rollout progress, pods and recent events')
    .argument('<resource...>', 'TYPE/NAME or TYPE NAME')
    .action(async function (this: Command, args: string[]) {
      await withSession(this, async (session) => {
        const target = parseTarget(args);
        const obj = await getTarget<KubeObject & Workload & { spec?: { strategy?: unknown } }>(session, target);
        const lines = [
          `Name:         ${obj.metadata.name}`,
          `Namespace:    ${obj.metadata.namespace ?? ''}`,
          `Kind:         ${target.type.kind} (${target.type.group || 'core'}/${target.type.version})`,
        ];
        lines.push(
          `Labels:       ${
            Object.entries(obj.metadata.labels ?? {})
              .map(([k, v]) => `${k}=${v}`)
              .join(',') || '<none>'
          }`,
        );
        lines.push(`Created:      ${obj.metadata.creationTimestamp ?? ''}`);
        if (WORKLOAD_KINDS.has(target.type.kind)) {
          lines.push(`Selector:     ${labelSelectorToString(obj.spec?.selector as LabelSelectorLike)}`);
          lines.push(`Strategy:\n${indent(toYaml(obj.spec?.updateStrategy ?? obj.spec?.strategy ?? {}))}`);
          const status = rolloutStatus(target.type, obj);
          const pods = await podsOfWorkload(session, obj);
          lines.push('Rollout:', indent(renderFrame({ type: target.type, workload: obj, pods, status, nowMs: Date.now() })));
        } else {
          lines.push(`Spec:\n${indent(toYaml(obj.spec ?? {}))}`);
        }
        const events = await session.client
          .list<
            KubeObject & {
              type?: string;
              reason?: string;
              note?: string;
              eventTime?: string;
              deprecatedLastTimestamp?: string;
              regarding?: { uid?: string };
            }
          >(Events, {
            namespace: obj.metadata.namespace,
            fieldSelector: `regarding.name=${obj.metadata.name}`,
          })
          .then((l) => l.items.filter((e) => e.regarding?.uid === obj.metadata.uid))
          .catch(() => []);
        lines.push('Events:');
        lines.push(
          events.length
            ? indent(table([['TYPE', 'REASON', 'MESSAGE'], ...events.slice(-15).map((e) => [e.type ?? '', e.reason ?? '', e.note ?? ''])]))
            : '  <none>',
        );
        write(lines.join('\n'));
      });
    });
  return describe.addCommand(describeRolloutCommand());
}

const indent = (text: string) =>
  text
    .trimEnd()
    .split('\n')
    .map((l) => (l ? `  ${l}` : l))
    .join('\n');

const Services = resolveType('service');

export function exposeCommand(): Command {
  return new Command('expose')
    .description(
      "expose a CloneSet, Advanced StatefulSet/DaemonSet, Deployment, … as a Service selecting its pods (the workload's matchLabels)",
    )
    .argument('<resource...>', 'TYPE/NAME')
    .requiredOption('--port <port>', 'the port the service serves on')
    .option('--target-port <port>', 'the container port traffic goes to (default: --port)')
    .option('--name <name>', 'the Service name (default: the resource name)')
    .option('--protocol <protocol>', 'TCP, UDP or SCTP', 'TCP')
    .option('--type <type>', 'ClusterIP, NodePort, LoadBalancer', 'ClusterIP')
    .option('--dry-run [strategy]', 'must be "none", "server", or "client"', 'none')
    .option('-o, --output <format>', 'output format: json|yaml|name')
    .action(async function (this: Command, args: string[]) {
      await withSession(this, async (session, opts) => {
        const target = parseTarget(args);
        const obj = await getTarget<KubeObject & { spec?: { selector?: LabelSelectorLike } }>(session, target);
        const selector = obj.spec?.selector?.matchLabels;
        if (!selector || Object.keys(selector).length === 0 || (obj.spec?.selector?.matchExpressions?.length ?? 0) > 0) {
          throw new CliError(`cannot expose ${target.type.kind} ${target.name}: a Service needs a selector made of matchLabels only`);
        }
        const port = Number(opts.port);
        const targetPort = opts.targetPort === undefined ? port : /^\d+$/.test(opts.targetPort) ? Number(opts.targetPort) : opts.targetPort;
        const name = opts.name ?? target.name;
        const service: KubeObject = {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name, namespace: session.namespace, labels: obj.metadata.labels },
          spec: { selector, type: opts.type, ports: [{ port, targetPort, protocol: opts.protocol }] },
        } as KubeObject;
        const dryRun = parseDryRun(opts.dryRun);
        const output = parseOutput(opts.output);
        if (dryRun === 'client') return printResult(service, Services, output, 'exposed', dryRun);
        try {
          const created = await session.client.create(Services, service, { namespace: session.namespace, dryRun: dryRun === 'server' });
          printResult(created, Services, output, 'exposed', dryRun);
        } catch (err) {
          throw new CliError(describeError(err, { type: Services, name }));
        }
      });
    });
}

/** SidecarSet hot upgrade: which of <name>-1 / <name>-2 is the working container (sidecarset controller annotation). */
export const HOT_UPGRADE_WORKING_ANNOTATION = 'kruise.io/sidecarset-working-hotupgrade-container';

/** The container `exec -S NAME` enters: the hot-upgrade working container when NAME is a hot-upgrade sidecar. */
export function sidecarContainer(pod: Pod, sidecar: string): string {
  const working = pod.metadata.annotations?.[HOT_UPGRADE_WORKING_ANNOTATION];
  if (working) {
    try {
      const byName = JSON.parse(working) as Record<string, string>;
      if (byName[sidecar]) return byName[sidecar];
    } catch {
      throw new CliError(`pod ${pod.metadata.name} has a malformed ${HOT_UPGRADE_WORKING_ANNOTATION} annotation`);
    }
  }
  const names = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])].map((c) => c.name);
  if (names.includes(sidecar)) return sidecar;
  throw new CliError(`pod ${pod.metadata.name} has no sidecar container "${sidecar}" (containers: ${names.join(', ')})`);
}

/**
 * The pod `exec TYPE/NAME` enters, as kubectl's attachable pod: the most active of the pods the
 * workload selects (assigned, running, ready longest, fewest restarts, oldest).
 */
export function attachablePod(pods: readonly Pod[]): Pod | undefined {
  return [...pods].sort((a, b) => compareActivePods(b, a))[0];
}

/** The pod named by POD, pod/POD or a workload's TYPE/NAME. */
async function podOf(session: Session, arg: string): Promise<Pod> {
  const slash = arg.indexOf('/');
  const target = slash < 0 ? { type: Pods, name: arg } : parseTarget([arg]);
  if (target.type.kind === 'Pod') return getTarget<Pod>(session, { type: Pods, name: target.name });
  const obj = await getTarget<KubeObject & { spec?: { selector?: LabelSelectorLike } }>(session, target);
  const selector = obj.spec?.selector;
  if (!selector) throw new CliError(`cannot attach to ${target.type.kind} ${target.name}: it has no pod selector`);
  const pods = await session.client
    .list<Pod>(Pods, { namespace: ns(session, Pods), labelSelector: labelSelectorToString(selector) })
    .catch((err: unknown) => {
      throw new CliError(describeError(err));
    });
  const pod = attachablePod(pods.items.filter((p) => !p.metadata.deletionTimestamp));
  if (!pod)
    throw new CliError(`no pods of ${typeName(target.type)}/${target.name} to exec into (selector ${labelSelectorToString(selector)})`);
  return pod;
}

export function execCommand(): Command {
  return new Command('exec')
    .description(
      'execute a command in a container of a pod, or of the first pod of a workload (TYPE/NAME); -S/--sidecar enters an injected sidecar (for hot-upgrade sidecars, the working one of NAME-1/NAME-2)',
    )
    .argument('<pod>', 'POD, pod/POD or TYPE/NAME (a workload: its most active pod)')
    .argument('[command...]', 'the command, after --')
    .option('-S, --sidecar <name>', 'the sidecar container to enter')
    .option('-c, --container <name>', 'the container to enter')
    .option('-i, --stdin', 'pass stdin to the container')
    .option('-t, --tty', 'stdin is a TTY')
    .option('-v, --v <level>', "kubectl's log level for the exec (6 shows the request: pod, container, command)")
    .action(async function (this: Command, podArg: string, command: string[]) {
      if (command.length === 0) throw new CliError('you must specify at least one command for the container');
      let pod: Pod | undefined;
      let container: string | undefined;
      let namespace = '';
      let kubeconfig: string | undefined;
      let context: string | undefined;
      await withSession(this, async (session, opts) => {
        namespace = session.namespace;
        kubeconfig = opts.kubeconfig;
        context = opts.context;
        container = opts.container;
        pod = await podOf(session, podArg);
        const phase = pod.status?.phase;
        if (phase === 'Succeeded' || phase === 'Failed')
          throw new CliError(`cannot exec into a container in a completed pod; current phase is ${phase}`);
        if (opts.sidecar) {
          container = sidecarContainer(pod, opts.sidecar);
          if (container !== opts.sidecar) cliIO().err(`Enter working container ${container} of SidecarSet.\n`);
        }
      });
      const opts = this.opts();
      const kubectlArgs = [
        ...(kubeconfig ? ['--kubeconfig', kubeconfig] : []),
        ...(context ? ['--context', context] : []),
        'exec',
        '-n',
        namespace,
        pod!.metadata.name!,
        ...(container ? ['-c', container] : []),
        ...(opts.stdin ? ['-i'] : []),
        ...(opts.tty ? ['-t'] : []),
        ...(opts.v !== undefined ? [`-v=${opts.v}`] : []),
        '--',
        ...command,
      ];
      // The plugin's own process hands kubectl its terminal; a run inside another program gets
      // kubectl's output in its own (runKubectlKruise's io).
      const io = cliIO();
      const piped = !isProcessIO(io);
      const code = await new Promise<number>((resolve, reject) => {
        const child = spawn(process.env.KUBECTL ?? 'kubectl', kubectlArgs, { stdio: piped ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
        child.stdout?.on('data', (chunk: Buffer) => io.out(chunk.toString()));
        child.stderr?.on('data', (chunk: Buffer) => io.err(chunk.toString()));
        child.on('error', (err) =>
          reject(new CliError(`cannot run kubectl (${err.message}): kubectl must be on the PATH, or named by $KUBECTL`)),
        );
        child.on('close', (c) => resolve(c ?? 1));
      });
      io.exitCode = code;
    });
}
