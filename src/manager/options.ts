// kruise-manager's command-line flags (spec §24), with upstream names and defaults, plus the few
// Kruise TS needs for running outside a cluster (kubeconfig, webhook client mode).
import { Command, Option, InvalidArgumentError, type OptionValues } from 'commander';
import { parseDuration } from '../util/duration.ts';
import { parseFeatureGates } from '../apis/features.ts';
import { API_VERSION_SETS, DEFAULT_API_VERSION_SET, type APIVersionSet } from '../apis/registry.ts';
import { DEFAULT_WEBHOOK_PORT } from '../runtime/webhook/server.ts';
import { loggingFormatOption, type LoggingFormat } from '../runtime/log.ts';

export const KRUISE_NAMESPACE_DEFAULT = 'kruise-system';
/** --leader-election-id's default: the leader Lease's name, and the name of the shard ring (--sharding). */
export const LEADER_ELECTION_ID_DEFAULT = 'kruise-manager';

/**
 * The `--<name>-workers` flags, one per controller this manager runs: the controller's name, or
 * ControllerSetup.workersFlag where upstream spells it differently (`crr` for
 * ContainerRecreateRequest). A controller that does not exist has no flag. Written out rather than
 * read from the controllers: importing them here would load and compile all their code before the
 * webhook server listens (the manager imports them once it does); test/unit/manager/options.test.ts
 * checks that the list names every controller.
 */
export const WORKERS_FLAGS: readonly string[] = [
  'cloneset',
  'daemonset',
  'statefulset',
  'nodeimage',
  'imagepulljob',
  'imagelistpulljob',
  'crr',
  'podreadiness',
  'sidecarterminator',
  'sidecarset',
  'containerlaunchpriority',
  'broadcastjob',
  'advancedcronjob',
  'uniteddeployment',
  'ephemeraljob',
  'podunavailablebudget',
  'resourcedistribution',
  'persistentpodstate',
  'podprobemarker',
  'nodepodprobe',
  'workloadspread',
];
/** Upstream's default for every --<name>-workers. */
const DEFAULT_WORKERS = 3;

export interface ManagerConfig {
  kubeconfig?: string;
  metricsAddr: string;
  /** HTTPS metrics, only to callers a TokenReview + SubjectAccessReview allow (kubebuilder's --metrics-secure). */
  metricsSecure: boolean;
  /** Directory with the metrics serving certificate; unset = self-signed at start-up. */
  metricsCertPath: string;
  metricsCertName: string;
  metricsCertKey: string;
  healthProbeAddr: string;
  enableLeaderElection: boolean;
  leaderElectionNamespace: string;
  leaderElectionId: string;
  /** Lease timing in ms (client-go's defaults 15 s / 10 s / 2 s). */
  leaderElectionLeaseDurationMs: number;
  leaderElectionRenewDeadlineMs: number;
  leaderElectionRetryPeriodMs: number;
  /**
   * --sharding: every replica reconciles a part of the workloads (docs/sharding.md); off: controllers
   * on the elected leader only. Needs leader election (the leader runs the sharder).
   */
  sharding: boolean;
  /** Restrict watches to one namespace ('' = all). */
  namespace: string;
  /** Informer resync: every watched object is reconciled at least this often (upstream: controller-runtime's 10h). */
  syncPeriodMs: number;
  expectationTimeoutMs: number;
  /** Start-up fails, naming the cache, when an informer has not synced within this. */
  controllerCacheSyncTimeoutMs: number;
  /** Start-up fails when the webhook server does not answer its readiness check within this. */
  webhookInitializeTimeoutMs: number;
  /** The --feature-gates value as given (validated at parse time). */
  featureGates: string;
  /**
   * --api-versions: the Kruise API versions the CRDs serve (`kruise start` installs them; the manager
   * warns when the installed CRDs differ). OpenKruise v1.8.2's by default; `v1beta1` is opt-in.
   */
  apiVersions: APIVersionSet;
  workers: Record<string, number>;
  clonesetScalingExcludePreparingDelete: boolean;
  /** --nodeimage-creation-delay in ms: how long a Node must have been Ready before its NodeImage is created. */
  nodeimageCreationDelay: number;
  /** --assign-bcj-pods-by-scheduler: BroadcastJob pods go through the scheduler (node-name affinity), else get spec.nodeName. */
  assignBcjPodsByScheduler: boolean;
  /** --default-ttlseconds-for-always-nodeimage: extra seconds NodeImage tags of Always-type ImagePullJobs live. */
  defaultTtlsecondsForAlwaysNodeimage: number;
  /** --rest-config-qps: the QPS of each client (one per controller, as upstream). */
  apiQps: number;
  /** --rest-config-burst. */
  apiBurst: number;
  webhookPort: number;
  webhookHost: string;
  webhookCertDir: string;
  /** timeoutSeconds of every webhook (the pod webhook's too, as upstream's chart sets them). */
  webhookTimeoutSeconds: number;
  /** How the API server reaches the webhooks: `url` (https://<host>:<port>, local clusters) or `service`. */
  webhookClientMode: 'url' | 'service';
  identity?: string;
  /** --logging-format: `text` (klog-like) or `json`; unset = text on a terminal, else JSON. */
  loggingFormat?: LoggingFormat;
}

const duration = (v: string) => {
  try {
    return parseDuration(v);
  } catch (err) {
    throw new InvalidArgumentError((err as Error).message);
  }
};
const int = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('must be a whole number >= 0');
  return n;
};
/** Upstream bounds: 0 … 31 days. */
const ttlSeconds = (v: string) => {
  const n = int(v);
  if (n > 3600 * 24 * 31) throw new InvalidArgumentError(`must be at most ${3600 * 24 * 31}`);
  return n;
};
const bool = (v: string) => {
  if (v === 'true') return true;
  if (v === 'false') return false;
  throw new InvalidArgumentError('must be true or false');
};
const gates = (v: string) => {
  try {
    parseFeatureGates(v);
    return v;
  } catch (err) {
    throw new InvalidArgumentError((err as Error).message);
  }
};

/** Adds the manager flags to cmd. Go-style `--flag=value` and `--flag value` both work. */
export function addManagerFlags(cmd: Command): Command {
  cmd
    .option('--kubeconfig <path>', 'kubeconfig of the cluster to manage (default: $KUBECONFIG, else the embedded local cluster)')
    .option('--metrics-addr <addr>', 'address the metrics endpoint binds to', ':8080')
    .addOption(
      new Option(
        '--metrics-secure <bool>',
        'serve metrics over HTTPS to callers allowed to get /metrics (TokenReview + SubjectAccessReview)',
      )
        .argParser(bool)
        .default(false),
    )
    .option('--metrics-cert-path <dir>', 'directory of the metrics serving certificate (default: self-signed)', '')
    .option('--metrics-cert-name <file>', 'certificate file in --metrics-cert-path', 'tls.crt')
    .option('--metrics-cert-key <file>', 'key file in --metrics-cert-path', 'tls.key')
    .option('--health-probe-addr <addr>', 'address the health probes bind to', ':8000')
    .addOption(new Option('--enable-leader-election <bool>', 'elect a leader among replicas').argParser(bool).default(true))
    .option(
      '--leader-election-namespace <ns>',
      'namespace of the leader election Lease',
      process.env.POD_NAMESPACE || KRUISE_NAMESPACE_DEFAULT,
    )
    .option('--leader-election-id <name>', 'name of the leader election Lease', LEADER_ELECTION_ID_DEFAULT)
    .addOption(
      new Option('--leader-election-lease-duration <duration>', 'how long a standby waits on an unrenewed lease before taking it')
        .argParser(duration)
        .default(15_000, '15s'),
    )
    .addOption(
      new Option('--leader-election-renew-deadline <duration>', 'how long the leader retries renewing before it steps down')
        .argParser(duration)
        .default(10_000, '10s'),
    )
    .addOption(
      new Option('--leader-election-retry-period <duration>', 'interval between leader election attempts')
        .argParser(duration)
        .default(2_000, '2s'),
    )
    .addOption(
      new Option(
        '--sharding <bool>',
        'every replica reconciles its share of the workloads (a shard Lease each; the leader assigns them; docs/sharding.md)',
      )
        .argParser(bool)
        .default(false),
    )
    .option('--namespace <ns>', "only watch this namespace ('' = all)", '')
    .addOption(
      new Option('--sync-period <duration>', 'minimum frequency at which watched resources are reconciled (informer resync)')
        .argParser(duration)
        .default(36_000_000, '10h'),
    )
    .addOption(
      new Option('--expectation-timeout <duration>', 'drop unsatisfied expectations after this long')
        .argParser(duration)
        .default(300_000, '5m'),
    )
    .addOption(
      new Option('--controller-cache-sync-timeout <duration>', 'start-up fails when an informer cache has not synced within this')
        .argParser(duration)
        .default(120_000, '2m'),
    )
    .addOption(
      new Option('--webhook-initialize-timeout <duration>', 'start-up fails when the webhook server is not ready within this')
        .argParser(duration)
        .default(60_000, '60s'),
    )
    .addOption(new Option('--feature-gates <gates>', 'A=true,B=false,... (upstream gate names)').argParser(gates).default(''))
    .addOption(
      new Option(
        '--api-versions <set>',
        "the Kruise API versions the CRDs serve: OpenKruise v1.8.2's (v1alpha1; Advanced StatefulSet v1beta1 too), or v1beta1 for every kind that has it",
      )
        .choices(API_VERSION_SETS)
        .default(DEFAULT_API_VERSION_SET),
    )
    .addOption(
      new Option('--cloneset-scaling-exclude-preparing-delete <bool>', 'CloneSet scaling ignores PreparingDelete pods')
        .argParser(bool)
        .default(false),
    )
    .addOption(
      new Option('--assign-bcj-pods-by-scheduler <bool>', 'bind BroadcastJob pods through the scheduler (false: set spec.nodeName)')
        .argParser(bool)
        .default(true),
    )
    .addOption(
      new Option('--nodeimage-creation-delay <duration>', 'delay NodeImage creation after the Node is Ready')
        .argParser(duration)
        .default(30_000, '30s'),
    )
    .addOption(
      new Option(
        '--default-ttlseconds-for-always-nodeimage <n>',
        'extra seconds NodeImage tags of finished Always-type ImagePullJobs are kept',
      )
        .argParser(ttlSeconds)
        .default(300),
    )
    .addOption(
      new Option('--rest-config-qps <n>', 'client-side QPS of each API client (every controller has its own)').argParser(int).default(30),
    )
    .addOption(
      new Option('--rest-config-burst <n>', 'client-side burst of each API client (every controller has its own)')
        .argParser(int)
        .default(50),
    )
    .addOption(new Option('--webhook-port <port>', 'port of the admission webhook server').argParser(int).default(DEFAULT_WEBHOOK_PORT))
    .option(
      '--webhook-host <host>',
      'address the webhook server binds to and, in url mode, the host the API server calls (default: 127.0.0.1 in url mode, all interfaces in service mode)',
    )
    .option('--webhook-cert-dir <dir>', 'where the webhook serving certificate is written', '')
    .addOption(
      new Option(
        '--webhook-timeout-seconds <n>',
        "timeoutSeconds of every webhook of the webhook configurations (the chart's webhookConfiguration.timeoutSeconds)",
      )
        .argParser((v) => {
          const n = int(v);
          if (n < 1 || n > 30) throw new InvalidArgumentError('must be between 1 and 30');
          return n;
        })
        .default(10),
    )
    .addOption(
      new Option(
        '--webhook-client-mode <mode>',
        'how the API server reaches the webhooks (default: service in a pod without --kubeconfig, else url)',
      ).choices(['url', 'service']),
    )
    .option('--identity <id>', 'leader election identity (default: hostname + random suffix)')
    .addOption(loggingFormatOption());
  for (const name of WORKERS_FLAGS) {
    cmd.addOption(new Option(`--${name}-workers <n>`, `max concurrent ${name} reconciles`).argParser(int).default(DEFAULT_WORKERS));
  }
  return cmd;
}

/** Reads the parsed commander options back into a ManagerConfig. */
export function managerConfig(o: OptionValues, env: Readonly<Record<string, string | undefined>> = process.env): ManagerConfig {
  const clientMode: 'url' | 'service' = o.webhookClientMode ?? defaultClientMode(o.kubeconfig, env);
  if (o.sharding && !o.enableLeaderElection) throw new Error('--sharding needs --enable-leader-election=true: the leader runs the sharder');
  const workers: Record<string, number> = {};
  for (const name of WORKERS_FLAGS) workers[name] = o[`${camel(name)}Workers`];
  return {
    kubeconfig: o.kubeconfig,
    metricsAddr: o.metricsAddr,
    metricsSecure: o.metricsSecure,
    metricsCertPath: o.metricsCertPath,
    metricsCertName: o.metricsCertName,
    metricsCertKey: o.metricsCertKey,
    healthProbeAddr: o.healthProbeAddr,
    enableLeaderElection: o.enableLeaderElection,
    leaderElectionNamespace: o.leaderElectionNamespace,
    leaderElectionId: o.leaderElectionId,
    leaderElectionLeaseDurationMs: o.leaderElectionLeaseDuration,
    leaderElectionRenewDeadlineMs: o.leaderElectionRenewDeadline,
    leaderElectionRetryPeriodMs: o.leaderElectionRetryPeriod,
    sharding: o.sharding,
    namespace: o.namespace,
    syncPeriodMs: o.syncPeriod,
    expectationTimeoutMs: o.expectationTimeout,
    controllerCacheSyncTimeoutMs: o.controllerCacheSyncTimeout,
    webhookInitializeTimeoutMs: o.webhookInitializeTimeout,
    featureGates: o.featureGates,
    apiVersions: o.apiVersions,
    workers,
    clonesetScalingExcludePreparingDelete: o.clonesetScalingExcludePreparingDelete,
    nodeimageCreationDelay: o.nodeimageCreationDelay,
    assignBcjPodsByScheduler: o.assignBcjPodsByScheduler,
    defaultTtlsecondsForAlwaysNodeimage: o.defaultTtlsecondsForAlwaysNodeimage,
    apiQps: o.restConfigQps,
    apiBurst: o.restConfigBurst,
    webhookPort: o.webhookPort,
    webhookHost: o.webhookHost ?? (clientMode === 'url' ? '127.0.0.1' : ''),
    webhookCertDir: o.webhookCertDir,
    webhookTimeoutSeconds: o.webhookTimeoutSeconds,
    webhookClientMode: clientMode,
    identity: o.identity,
    loggingFormat: o.loggingFormat,
  };
}

/**
 * Service mode wherever the API server can reach a Service: in a pod (the kubelet sets
 * KUBERNETES_SERVICE_HOST) using its in-cluster credentials, as upstream is deployed. A manager
 * given a kubeconfig runs outside the cluster, where the API server cannot route to it through a
 * Service: url mode (and the local cluster's webhook proxy when it has one).
 */
export function defaultClientMode(kubeconfig: string | undefined, env: Readonly<Record<string, string | undefined>>): 'url' | 'service' {
  return !kubeconfig && !env.KUBECONFIG && env.KUBERNETES_SERVICE_HOST ? 'service' : 'url';
}

function camel(s: string): string {
  return s.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}
