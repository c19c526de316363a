// `kruise cluster up|down|status|env|restart`: the embedded local cluster from the command line.
import { Argument, Command, InvalidArgumentError } from 'commander';
import {
  up,
  down,
  status,
  readState,
  envLines,
  restartComponent,
  HA_GOAWAY_CHANCE,
  MAX_API_SERVERS,
  CLUSTER_COMPONENTS,
  DEFAULT_CLUSTER,
  type Component,
} from '../cluster/local-cluster.ts';

export function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a whole number >= 1');
  return n;
}

export function wholeNumber(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('must be a whole number >= 0');
  return n;
}

/** Seconds as a whole number >= 0. */
export function seconds(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('must be a whole number of seconds >= 0');
  return n;
}

export function clusterCommand(): Command {
  const cmd = new Command('cluster').description('run a local Kubernetes control plane with simulated (KWOK) nodes');
  const name = ['--name <name>', 'cluster name (its run dir is ~/.cache/kruise-ts/clusters/<name>)', DEFAULT_CLUSTER] as const;

  cmd
    .command('up')
    .description('start the cluster (or reuse it when already running) and print its kubeconfig path')
    .option(...name)
    .option('--nodes <n>', 'number of simulated nodes, spread over 3 zones', positiveInt, 3)
    .option('--real-nodes <n>', 'real kubelet nodes with their own containerd, real-0 … (Linux, root)', wholeNumber, 0)
    .option('--port <port>', 'kube-apiserver port on 127.0.0.1 (default: a free port)', positiveInt)
    .option(
      '--apiservers <n>',
      `kube-apiservers over the one etcd (1-${MAX_API_SERVERS}); more than one: behind a TCP load balancer at --port, each with --goaway-chance=${HA_GOAWAY_CHANCE}`,
      positiveInt,
      1,
    )
    .action(async (o: { name: string; nodes: number; realNodes: number; port?: number; apiservers: number }) => {
      const { state } = await up({ name: o.name, nodes: o.nodes, realNodes: o.realNodes, port: o.port, apiServers: o.apiservers });
      process.stdout.write(envLines(state).join('\n') + '\n');
    });

  cmd
    .command('down')
    .description('stop every process of the cluster (also after a crash) and remove its data; logs are kept')
    .option(...name)
    .action(async (o: { name: string }) => {
      await down(o.name);
    });

  cmd
    .command('status')
    .description('show whether the cluster and each component are running')
    .option(...name)
    .option('-o, --output <format>', 'text or json', 'text')
    .action(async (o: { name: string; output: string }) => {
      const s = await status(o.name);
      if (o.output === 'json') {
        process.stdout.write(JSON.stringify(s, null, 2) + '\n');
      } else {
        process.stdout.write(`cluster "${s.name}": ${s.running ? 'running' : 'not running'}${s.server ? ` at ${s.server}` : ''}\n`);
        for (const c of s.components) process.stdout.write(`  ${c.name.padEnd(24)} ${c.alive ? `running (pid ${c.pid})` : 'stopped'}\n`);
        if (s.nodesReady !== undefined) process.stdout.write(`  nodes Ready              ${s.nodesReady}\n`);
        for (const n of s.realNodes)
          process.stdout.write(
            `  ${`real node ${n.name}`.padEnd(24)} ${n.alive ? `running at ${n.ip} (kubelet :${n.kubeletPort})` : 'stopped'}\n`,
          );
        if (s.kubeconfig) process.stdout.write(`  kubeconfig               ${s.kubeconfig}\n`);
      }
      process.exitCode = s.running ? 0 : 1;
    });

  cmd
    .command('restart')
    .description('stop one component and start it again with the same flags; waits until the API server is ready')
    .addArgument(new Argument('<component>', 'the component').choices(CLUSTER_COMPONENTS))
    .option(...name)
    .option('--down-for <seconds>', 'keep it stopped this long first (an outage)', seconds, 0)
    .option('--kill', 'SIGKILL instead of SIGTERM (a crash)', false)
    .action(async (component: Component, o: { name: string; downFor: number; kill: boolean }) => {
      await restartComponent(o.name, component, {
        downForMs: o.downFor * 1000,
        signal: o.kill ? 'SIGKILL' : 'SIGTERM',
        log: (line) => process.stderr.write(line + '\n'),
      });
    });

  cmd
    .command('env')
    .description('print shell exports that point kubectl at the cluster: eval "$(kruise cluster env)"')
    .option(...name)
    .action((o: { name: string }) => {
      const state = readState(o.name);
      if (!state) throw new Error(`cluster "${o.name}" is not running; start it with: kruise cluster up --name ${o.name}`);
      process.stdout.write(envLines(state).join('\n') + '\n');
    });
  return cmd;
}
