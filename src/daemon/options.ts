// kruise-daemon's command-line flags (spec §21), upstream names and defaults, plus what Kruise TS
// needs outside a cluster (--kubeconfig) and for the local cluster (--simulated).
import { Command, InvalidArgumentError } from 'commander';
import { parseFeatureGates } from '../apis/features.ts';
import { loggingFormatOption, type LoggingFormat } from '../runtime/log.ts';

export interface DaemonConfig {
  kubeconfig?: string;
  /** The node served (real mode); from --node-name or NODE_NAME. */
  nodeName?: string;
  /** CRI endpoint; absent = probe the usual sockets. */
  runtimeEndpoint?: string;
  /** healthz + metrics, upstream :10221; `0` disables. */
  addr: string;
  /** HTTPS on --addr, /metrics only to callers a TokenReview + SubjectAccessReview allow. */
  metricsSecure?: boolean;
  /** Directory with the serving certificate (--metrics-cert-path); unset = self-signed at start-up. */
  metricsCertPath?: string;
  metricsCertName?: string;
  metricsCertKey?: string;
  /** Concurrent pulls per node; -1 = unbounded (upstream default). */
  maxWorkersForPullImage: number;
  featureGates: string;
  /** Serve every node matching simulatedNodeSelector with SimulatedRuntime (KWOK nodes). */
  simulated: boolean;
  simulatedNodeSelector: string;
  /** --logging-format: `text` (klog-like) or `json`; unset = text on a terminal, else JSON. */
  loggingFormat?: LoggingFormat;
  /** Kubelet-style image credential provider plugins: their CredentialProviderConfig (skipped when absent) and binaries. */
  pluginConfigFile?: string;
  pluginBinDir?: string;
}

export const DEFAULT_SIMULATED_NODE_SELECTOR = 'type=kwok';
/** Upstream's defaults (the chart mounts them elsewhere and passes both flags). */
export const DEFAULT_PLUGIN_CONFIG_FILE = '/kruise/CredentialProviderPlugin.yaml';
export const DEFAULT_PLUGIN_BIN_DIR = '/kruise/plugins';

const workers = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < -1 || n === 0) throw new InvalidArgumentError('must be -1 (unbounded) or a whole number >= 1');
  return n;
};
const gates = (v: string) => {
  try {
    parseFeatureGates(v);
  } catch (err) {
    throw new InvalidArgumentError((err as Error).message);
  }
  return v;
};

export function addDaemonFlags(cmd: Command): Command {
  return cmd
    .option('--kubeconfig <path>', 'kubeconfig of the cluster (default: KUBECONFIG, then in-cluster)')
    .option('--node-name <name>', 'the node this daemon serves (default: env NODE_NAME)')
    .option('--runtime-endpoint <endpoint>', 'CRI socket, e.g. unix:///run/containerd/containerd.sock (default: probe the usual ones)')
    .option('--socket-file <path>', 'upstream name of --runtime-endpoint')
    .option('--addr <addr>', 'address for /healthz and /metrics', ':10221')
    .option('--metrics-secure', 'serve --addr over HTTPS; /metrics only to callers allowed to get it (TokenReview + SubjectAccessReview)')
    .option('--metrics-cert-path <dir>', 'directory of the serving certificate for --metrics-secure (default: self-signed)')
    .option('--metrics-cert-name <file>', 'certificate file in --metrics-cert-path', 'tls.crt')
    .option('--metrics-cert-key <file>', 'key file in --metrics-cert-path', 'tls.key')
    .option('--max-workers-for-pull-image <n>', 'concurrent image pulls; -1 is unbounded', workers, -1)
    .option('--feature-gates <gates>', 'feature gates, e.g. InPlaceUpdateEnvFromMetadata=true', gates, '')
    .option('--simulated', "serve the local cluster's simulated (KWOK) nodes: one process, no container runtime")
    .option('--simulated-node-selector <selector>', 'label selector of the nodes --simulated serves', DEFAULT_SIMULATED_NODE_SELECTOR)
    .addOption(loggingFormatOption())
    .option(
      '--plugin-config-file <path>',
      'CredentialProviderConfig of image credential provider plugins (skipped when absent)',
      DEFAULT_PLUGIN_CONFIG_FILE,
    )
    .option('--plugin-bin-dir <dir>', 'directory of the credential provider plugin binaries', DEFAULT_PLUGIN_BIN_DIR);
}

export function daemonConfig(o: Record<string, unknown>, env: NodeJS.ProcessEnv = process.env): DaemonConfig {
  const cfg: DaemonConfig = {
    kubeconfig: (o.kubeconfig as string | undefined) ?? (env.KUBECONFIG || undefined),
    nodeName: (o.nodeName as string | undefined) ?? (env.NODE_NAME || undefined),
    runtimeEndpoint: (o.runtimeEndpoint as string | undefined) ?? (o.socketFile as string | undefined),
    addr: o.addr as string,
    metricsSecure: !!o.metricsSecure,
    metricsCertPath: o.metricsCertPath as string | undefined,
    metricsCertName: (o.metricsCertName as string) ?? 'tls.crt',
    metricsCertKey: (o.metricsCertKey as string) ?? 'tls.key',
    maxWorkersForPullImage: o.maxWorkersForPullImage as number,
    featureGates: (o.featureGates as string) ?? '',
    simulated: !!o.simulated,
    simulatedNodeSelector: (o.simulatedNodeSelector as string) ?? DEFAULT_SIMULATED_NODE_SELECTOR,
    loggingFormat: o.loggingFormat as LoggingFormat | undefined,
    pluginConfigFile: (o.pluginConfigFile as string | undefined) ?? DEFAULT_PLUGIN_CONFIG_FILE,
    pluginBinDir: (o.pluginBinDir as string | undefined) ?? DEFAULT_PLUGIN_BIN_DIR,
  };
  if (!cfg.simulated && !cfg.nodeName)
    throw new Error('kruise daemon needs the node it runs on: --node-name or env NODE_NAME (or --simulated for the local cluster)');
  return cfg;
}
