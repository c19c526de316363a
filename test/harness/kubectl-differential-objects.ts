// The manifests of the kubectl differential test (issue #32): every file of OpenKruise v1.8.2's
// `config/samples/` as shipped, and one object per Kruise kind (18) with its spec filled in as far as
// a KWOK cluster with no provisioner and default feature gates allows (noted where a field is left out).
// Small (1-2 replicas) so both managers settle in seconds. Test-only.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';

export interface DifferentialObject {
  /** kubectl resource (plural.group): `kubectl get <resource> <name>` reads it at its preferred version. */
  resource: string;
  name: string;
  /** Where it came from: `samples/<file>` or `full`. */
  source: string;
  manifest: Record<string, any>;
  clusterScoped?: boolean;
  /** A pod of the namespace that must be Ready before this object is created (a CRR is refused for a pending pod). */
  afterPodReady?: string;
}

const GROUP = 'apps.kruise.io';
const IMAGE = 'registry.example/app:v1';
/** Label of the bare pod the CRR, EphemeralJob, PodProbeMarker and NodePodProbe work on. */
const TOOLS = { 'kdiff.kruise-ts.io/tools': 'true' };
/** The pod label the SidecarSet injects into (the full CloneSet's pods carry it). */
const SIDECAR = { 'kdiff.kruise-ts.io/sidecar': 'true' };

const PLURALS: Record<string, string> = {
  AdvancedCronJob: 'advancedcronjobs',
  BroadcastJob: 'broadcastjobs',
  CloneSet: 'clonesets',
  ContainerRecreateRequest: 'containerrecreaterequests',
  DaemonSet: 'daemonsets',
  EphemeralJob: 'ephemeraljobs',
  ImageListPullJob: 'imagelistpulljobs',
  ImagePullJob: 'imagepulljobs',
  NodeImage: 'nodeimages',
  NodePodProbe: 'nodepodprobes',
  PersistentPodState: 'persistentpodstates',
  PodProbeMarker: 'podprobemarkers',
  PodUnavailableBudget: 'podunavailablebudgets',
  ResourceDistribution: 'resourcedistributions',
  SidecarSet: 'sidecarsets',
  StatefulSet: 'statefulsets',
  UnitedDeployment: 'uniteddeployments',
  WorkloadSpread: 'workloadspreads',
};
const CLUSTER_SCOPED = new Set(['NodeImage', 'NodePodProbe', 'ResourceDistribution', 'SidecarSet']);

export const resourceOf = (apiVersion: string, kind: string): string =>
  kind === 'Pod' ? 'pods' : `${PLURALS[kind]}.${apiVersion.split('/')[0]}`;

function object(apiVersion: string, kind: string, name: string, spec: Record<string, unknown>, extra: Partial<DifferentialObject> = {}) {
  return {
    resource: resourceOf(apiVersion, kind),
    name,
    source: 'full',
    manifest: { apiVersion, kind, metadata: { name, labels: { 'kdiff.kruise-ts.io/object': name } }, spec },
    ...(CLUSTER_SCOPED.has(kind) ? { clusterScoped: true } : {}),
    ...extra,
  } satisfies DifferentialObject;
}

/** A pod template; containers without imagePullPolicy etc., so that defaulting is part of what is compared. */
const template = (labels: Record<string, string>, spec: Record<string, unknown> = {}) => ({
  metadata: { labels, annotations: { 'kdiff.kruise-ts.io/template': 'true' } },
  spec: {
    containers: [
      {
        name: 'main',
        image: IMAGE,
        env: [{ name: 'MODE', value: 'test' }],
        ports: [{ name: 'http', containerPort: 8080 }],
        resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '0.5', memory: '128Mi' } },
      },
    ],
    terminationGracePeriodSeconds: 5,
    ...spec,
  },
});

const lifecycle = { preDelete: { labelsHandler: { 'kdiff.kruise-ts.io/pre-delete': 'true' } } };
const completionPolicy = { type: 'Always', activeDeadlineSeconds: 600, ttlSecondsAfterFinished: 3600 };
const pullJob = {
  selector: { matchLabels: { 'kubernetes.io/os': 'linux' } },
  parallelism: 1,
  pullPolicy: { timeoutSeconds: 300, backoffLimit: 2 },
  completionPolicy,
  pullSecrets: ['pull-secret'],
  sandboxConfig: { labels: { io: 'kdiff' }, annotations: { io: 'kdiff' } },
  imagePullPolicy: 'IfNotPresent',
};

/** The bare pod of the tools label: Ready before the CRR is created. */
export const TOOLS_POD = 'full-pod';

/**
 * One object per kind, every spec field set except: volumeClaimTemplates (no provisioner on the local
 * cluster: pods would stay Pending), SidecarSet patchPodMetadata (needs a whitelist ConfigMap or
 * SidecarSetPatchPodMetadataDefaultsAllowed, off by default), StatefulSet ordinals (its gate is off by
 * default). ResourceDistribution and the image-pull kinds are refused or left alone by both managers
 * under default gates (ResourceDistributionGate, ImagePullJobGate off): that is compared too.
 */
export function fullObjects(namespace: string): DifferentialObject[] {
  const cs = { app: 'full-cloneset', ...SIDECAR };
  return [
    {
      resource: 'pods',
      name: TOOLS_POD,
      source: 'full',
      manifest: {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: TOOLS_POD, labels: { app: TOOLS_POD, ...TOOLS } },
        spec: template({}).spec,
      },
    },
    object('apps.kruise.io/v1alpha1', 'SidecarSet', 'full-sidecarset', {
      selector: { matchLabels: SIDECAR },
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace } },
      initContainers: [{ name: 'init-sidecar', image: IMAGE, command: ['sh', '-c', 'true'] }],
      containers: [
        {
          name: 'log-agent',
          image: IMAGE,
          command: ['agent'],
          podInjectPolicy: 'AfterAppContainer',
          upgradeStrategy: { upgradeType: 'ColdUpgrade' },
          shareVolumePolicy: { type: 'disabled' },
          transferEnv: [{ sourceContainerName: 'main', envName: 'MODE' }],
          volumeMounts: [{ name: 'logs', mountPath: '/var/log/app' }],
        },
      ],
      volumes: [{ name: 'logs', emptyDir: {} }],
      updateStrategy: {
        type: 'RollingUpdate',
        partition: 0,
        maxUnavailable: 1,
        paused: false,
        priorityStrategy: { weightPriority: [{ weight: 50, matchSelector: { matchLabels: { app: 'full-cloneset' } } }] },
        scatterStrategy: [{ key: 'app', value: 'full-cloneset' }],
      },
      injectionStrategy: { paused: false },
      imagePullSecrets: [{ name: 'pull-secret' }],
      revisionHistoryLimit: 5,
    }),
    object('apps.kruise.io/v1alpha1', 'NodeImage', 'full-nodeimage', {
      images: {
        'registry.example/app': {
          pullSecrets: [{ name: 'pull-secret', namespace }],
          tags: [
            {
              tag: 'v1',
              pullPolicy: { ttlSecondsAfterFinished: 300, activeDeadlineSeconds: 600, backoffLimit: 2, timeoutSeconds: 120 },
              version: 0,
            },
          ],
          sandboxConfig: { labels: { io: 'kdiff' } },
        },
      },
    }),
    object('apps.kruise.io/v1alpha1', 'NodePodProbe', 'full-nodepodprobe', {
      podProbes: [
        {
          name: TOOLS_POD,
          namespace,
          uid: '00000000-0000-0000-0000-000000000001',
          IP: '10.0.0.1',
          probes: [
            {
              name: 'healthy',
              containerName: 'main',
              probe: {
                exec: { command: ['true'] },
                initialDelaySeconds: 1,
                timeoutSeconds: 1,
                periodSeconds: 10,
                successThreshold: 1,
                failureThreshold: 3,
              },
            },
          ],
        },
      ],
    }),
    object('apps.kruise.io/v1alpha1', 'ResourceDistribution', 'full-resourcedistribution', {
      resource: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'full-config' }, data: { key: 'value' } },
      targets: {
        allNamespaces: true,
        excludedNamespaces: { list: [{ name: 'kube-system' }] },
        includedNamespaces: { list: [{ name: namespace }] },
        namespaceLabelSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace } },
      },
    }),
    object('apps.kruise.io/v1alpha1', 'WorkloadSpread', 'full-workloadspread', {
      targetRef: { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'full-cloneset' },
      subsets: [
        {
          name: 'first',
          maxReplicas: 1,
          tolerations: [{ key: 'dedicated', operator: 'Exists', effect: 'NoSchedule' }],
          patch: { metadata: { labels: { spread: 'first' } } },
        },
        // Adaptive scheduling: the last subset takes the rest (no maxReplicas).
        { name: 'rest', patch: { metadata: { labels: { spread: 'rest' } } } },
      ],
      scheduleStrategy: { type: 'Adaptive', adaptive: { rescheduleCriticalSeconds: 30, disableSimulationSchedule: false } },
    }),
    object('policy.kruise.io/v1alpha1', 'PodUnavailableBudget', 'full-pub', {
      selector: { matchLabels: { app: 'full-cloneset' } },
      maxUnavailable: 1,
    }),
    object('apps.kruise.io/v1alpha1', 'PersistentPodState', 'full-persistentpodstate', {
      targetRef: { apiVersion: 'apps.kruise.io/v1beta1', kind: 'StatefulSet', name: 'full-statefulset' },
      requiredPersistentTopology: { nodeTopologyKeys: ['kubernetes.io/hostname'] },
      preferredPersistentTopology: [{ weight: 100, preference: { nodeTopologyKeys: ['topology.kubernetes.io/zone'] } }],
      persistentPodAnnotations: [{ key: 'kdiff.kruise-ts.io/ip' }],
      persistentPodStateRetentionPolicy: 'WhenDeleted',
    }),
    object('apps.kruise.io/v1alpha1', 'CloneSet', 'full-cloneset', {
      replicas: 2,
      selector: { matchLabels: { app: 'full-cloneset' } },
      template: template(cs),
      scaleStrategy: { podsToDelete: [], maxUnavailable: 1, disablePVCReuse: true },
      updateStrategy: {
        type: 'InPlaceIfPossible',
        partition: 0,
        maxUnavailable: '50%',
        maxSurge: 0,
        paused: false,
        priorityStrategy: { weightPriority: [{ weight: 50, matchSelector: { matchLabels: { app: 'full-cloneset' } } }] },
        scatterStrategy: [{ key: 'app', value: 'full-cloneset' }],
        inPlaceUpdateStrategy: { gracePeriodSeconds: 5 },
      },
      revisionHistoryLimit: 5,
      minReadySeconds: 0,
      lifecycle: { ...lifecycle, inPlaceUpdate: { labelsHandler: { 'kdiff.kruise-ts.io/in-place': 'true' } } },
    }),
    object('apps.kruise.io/v1beta1', 'StatefulSet', 'full-statefulset', {
      replicas: 2,
      serviceName: 'full-statefulset',
      selector: { matchLabels: { app: 'full-statefulset' } },
      template: template({ app: 'full-statefulset' }, { readinessGates: [{ conditionType: 'InPlaceUpdateReady' }] }),
      podManagementPolicy: 'Parallel',
      updateStrategy: {
        type: 'RollingUpdate',
        rollingUpdate: {
          partition: 0,
          maxUnavailable: 1,
          podUpdatePolicy: 'InPlaceIfPossible',
          paused: false,
          minReadySeconds: 0,
          inPlaceUpdateStrategy: { gracePeriodSeconds: 5 },
          unorderedUpdate: {
            priorityStrategy: { weightPriority: [{ weight: 50, matchSelector: { matchLabels: { app: 'full-statefulset' } } }] },
          },
        },
      },
      revisionHistoryLimit: 5,
      reserveOrdinals: [1],
      lifecycle,
      scaleStrategy: { maxUnavailable: 1 },
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Retain' },
    }),
    object('apps.kruise.io/v1alpha1', 'DaemonSet', 'full-daemonset', {
      selector: { matchLabels: { app: 'full-daemonset' } },
      template: template({ app: 'full-daemonset' }),
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0, partition: 0, paused: false } },
      minReadySeconds: 0,
      burstReplicas: 10,
      revisionHistoryLimit: 5,
      lifecycle,
    }),
    object('apps.kruise.io/v1alpha1', 'UnitedDeployment', 'full-uniteddeployment', {
      replicas: 2,
      revisionHistoryLimit: 5,
      selector: { matchLabels: { app: 'full-uniteddeployment' } },
      template: {
        cloneSetTemplate: {
          metadata: { labels: { app: 'full-uniteddeployment' } },
          spec: {
            selector: { matchLabels: { app: 'full-uniteddeployment' } },
            template: template({ app: 'full-uniteddeployment' }),
            updateStrategy: { type: 'InPlaceIfPossible', maxUnavailable: 1 },
          },
        },
      },
      topology: {
        subsets: [
          {
            name: 'subset-a',
            replicas: 1,
            tolerations: [{ key: 'dedicated', operator: 'Exists' }],
            patch: { metadata: { labels: { subset: 'a' } } },
          },
          { name: 'subset-b', tolerations: [{ key: 'dedicated', operator: 'Exists' }] },
        ],
        scheduleStrategy: { type: 'Fixed' },
      },
      updateStrategy: { type: 'Manual', manualUpdate: { partitions: { 'subset-a': 0 } } },
    }),
    object('apps.kruise.io/v1alpha1', 'BroadcastJob', 'full-broadcastjob', {
      parallelism: 1,
      template: template({ app: 'full-broadcastjob' }, { restartPolicy: 'Never' }),
      completionPolicy,
      paused: false,
      failurePolicy: { type: 'FailFast', restartLimit: 1 },
    }),
    object('apps.kruise.io/v1alpha1', 'AdvancedCronJob', 'full-advancedcronjob', {
      // Once a year: no child within the test.
      schedule: '0 0 1 1 *',
      concurrencyPolicy: 'Forbid',
      startingDeadlineSeconds: 60,
      paused: false,
      successfulJobsHistoryLimit: 2,
      failedJobsHistoryLimit: 1,
      template: {
        broadcastJobTemplate: {
          spec: {
            parallelism: 1,
            template: template({ app: 'full-advancedcronjob' }, { restartPolicy: 'Never' }),
            completionPolicy: { type: 'Always' },
          },
        },
      },
    }),
    object(`${GROUP}/v1alpha1`, 'ImagePullJob', 'full-imagepulljob', { image: IMAGE, ...pullJob }),
    object(`${GROUP}/v1alpha1`, 'ImageListPullJob', 'full-imagelistpulljob', { images: [IMAGE, 'registry.example/tools:v1'], ...pullJob }),
    object(`${GROUP}/v1alpha1`, 'PodProbeMarker', 'full-podprobemarker', {
      selector: { matchLabels: TOOLS },
      probes: [
        {
          name: 'healthy',
          containerName: 'main',
          probe: { exec: { command: ['cat', '/tmp/healthy'] }, initialDelaySeconds: 1, timeoutSeconds: 1, periodSeconds: 10 },
          podConditionType: 'game.kruise.io/healthy',
          markerPolicy: [
            { state: 'Succeeded', labels: { 'game.kruise.io/healthy': 'true' }, annotations: { 'game.kruise.io/probed': 'true' } },
          ],
        },
      ],
    }),
    object(`${GROUP}/v1alpha1`, 'EphemeralJob', 'full-ephemeraljob', {
      selector: { matchLabels: TOOLS },
      replicas: 1,
      parallelism: 1,
      activeDeadlineSeconds: 600,
      ttlSecondsAfterFinished: 3600,
      template: {
        ephemeralContainers: [
          {
            name: 'debugger',
            image: 'registry.example/busybox:v1',
            command: ['sh', '-c', 'true'],
            imagePullPolicy: 'IfNotPresent',
            terminationMessagePolicy: 'File',
          },
        ],
      },
    }),
    // Finished by each manager on its own: no daemon answers, the deadline passes.
    object(
      `${GROUP}/v1alpha1`,
      'ContainerRecreateRequest',
      'full-crr',
      {
        podName: TOOLS_POD,
        containers: [{ name: 'main' }],
        strategy: {
          failurePolicy: 'Fail',
          orderedRecreate: false,
          forceRecreate: false,
          terminationGracePeriodSeconds: 5,
          unreadyGracePeriodSeconds: 1,
          minStartedSeconds: 0,
        },
        activeDeadlineSeconds: 3,
        ttlSecondsAfterFinished: 3600,
      },
      { afterPodReady: TOOLS_POD },
    ),
  ];
}

/** Every document of the module's config/samples, as shipped (some are placeholders both managers refuse). */
export function sampleObjects(moduleDir: string): DifferentialObject[] {
  const dir = path.join(moduleDir, 'config/samples');
  return readdirSync(dir)
    .filter((f) => /\.ya?ml$/.test(f))
    .sort()
    .flatMap((f) =>
      parseAllDocuments(readFileSync(path.join(dir, f), 'utf8'))
        .map((d) => d.toJS() as Record<string, any> | null)
        .filter((m): m is Record<string, any> => !!m?.kind)
        .map((manifest) => ({
          resource: resourceOf(manifest.apiVersion, manifest.kind),
          name: manifest.metadata.name as string,
          source: `samples/${f}`,
          manifest,
          ...(CLUSTER_SCOPED.has(manifest.kind) ? { clusterScoped: true } : {}),
        })),
    );
}

/**
 * Creation order: cluster-scoped objects first (the SidecarSet before the pods it injects), then the
 * bare pod and the policies (WorkloadSpread, PUB, PersistentPodState match pods when they are created),
 * then the workloads, then what needs a Ready pod.
 */
export function creationOrder(objects: readonly DifferentialObject[]): DifferentialObject[] {
  const rank = (o: DifferentialObject) =>
    o.clusterScoped
      ? 0
      : o.resource === 'pods' || /^(workloadspreads|podunavailablebudgets|persistentpodstates)\./.test(o.resource)
        ? 1
        : o.afterPodReady
          ? 3
          : 2;
  return [...objects].sort((a, b) => rank(a) - rank(b));
}
