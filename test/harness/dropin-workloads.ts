// The objects of the drop-in checks (issue #17): what upstream OpenKruise v1.8.2 creates before a
// takeover, and the inputs of the golden hashes (test/fixtures/upstream-v1.8.2/). One entry per
// object; covering a newly implemented kind is adding entries here (and, when it keeps revisions
// or hashes of its own, a check in test/unit/golden-upstream.test.ts).

export interface DropInObject {
  /** Resource name for kubectl (plural.group). */
  resource: string;
  name: string;
  manifest: Record<string, unknown>;
  /** Cluster-scoped: created once, before the namespaced objects (a SidecarSet must exist before the pods it injects). */
  clusterScoped?: boolean;
  /** A pod of the same namespace that must be Ready before this object is created (a CRR is refused for a pending pod). */
  afterPodReady?: string;
}

/** Namespaces that hold drop-in objects carry this label: the ResourceDistribution targets them. */
export const DROPIN_NAMESPACE_LABEL = 'kruise-ts.io/dropin';

const CLONESET = 'clonesets.apps.kruise.io';
const IMAGEPULLJOB = 'imagepulljobs.apps.kruise.io';
const IMAGELISTPULLJOB = 'imagelistpulljobs.apps.kruise.io';

const IMAGE = 'registry.example/app:v1';
/** The bare pod the CRR, the EphemeralJob and the PodProbeMarker work on carries this label. */
const TOOLS_LABEL = 'dropin.kruise-ts.io/tools';
const LAUNCH_PRIORITY_ANNOTATION = 'apps.kruise.io/container-launch-priority';
const group = 'apps.kruise.io';

function kruiseObject(
  resource: string,
  apiVersion: string,
  kind: string,
  name: string,
  spec: Record<string, unknown>,
  extra: Partial<DropInObject> = {},
): DropInObject {
  return {
    resource: `${resource}.${resource.startsWith('podunavailablebudgets') ? 'policy.kruise.io' : group}`,
    name,
    manifest: { apiVersion, kind, metadata: { name }, spec },
    ...extra,
  };
}

const podTemplate = (labels: Record<string, string>, spec: Record<string, unknown> = {}) => ({
  metadata: { labels },
  spec: { containers: [{ name: 'main', image: IMAGE }], ...spec },
});

/** The quantity notations whose stored form is compared with upstream's (Go resource.Quantity canonical text). */
export const QUANTITY_NOTATIONS = [
  '500m',
  '0.5',
  '1Gi',
  '1024Mi',
  '1e3',
  '100M',
  '1.5Gi',
  '0.1',
  '100n',
  '1000m',
  '2k',
  '+1',
  '01',
  '1.G',
  '1536Ki',
  '0.5Gi',
  '1E',
  '1500u',
  '2E3',
];

function cloneSet(name: string, spec: Record<string, unknown>, template: Record<string, unknown> = {}): DropInObject {
  const labels = { app: name };
  return {
    resource: CLONESET,
    name,
    manifest: {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'CloneSet',
      metadata: { name },
      spec: {
        selector: { matchLabels: labels },
        ...spec,
        template: {
          metadata: { labels: { ...labels, ...((template.labels as object) ?? {}) } },
          spec: { containers: [{ name: 'main', image: IMAGE }], ...((template.spec as object) ?? {}) },
        },
      },
    },
  };
}

export const DROPIN_OBJECTS: DropInObject[] = [
  cloneSet(
    'cs-recreate',
    { replicas: 2, updateStrategy: { type: 'ReCreate' } },
    {
      spec: {
        containers: [
          {
            name: 'main',
            image: IMAGE,
            resources: { requests: { cpu: '0.5', memory: '1024Mi' }, limits: { cpu: '1e3', memory: '2000M' } },
          },
          { name: 'side', image: IMAGE, resources: { requests: { cpu: '100m', memory: '0.5Gi' }, limits: { cpu: 1, memory: '1.5Gi' } } },
        ],
      },
    },
  ),
  cloneSet(
    'cs-inplace',
    {
      replicas: 3,
      updateStrategy: { type: 'InPlaceIfPossible', partition: 1, maxUnavailable: '50%' },
      lifecycle: {
        preDelete: { labelsHandler: { 'example.com/unready-blocker': 'true' } },
        inPlaceUpdate: { labelsHandler: { 'example.com/unready-blocker': 'true' } },
      },
      volumeClaimTemplates: [
        {
          metadata: { name: 'data' },
          spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1024Mi' } } },
        },
        {
          metadata: { name: 'cache' },
          spec: {
            accessModes: ['ReadWriteOnce'],
            storageClassName: 'standard',
            resources: { requests: { storage: '0.5Gi' }, limits: { storage: '1Gi' } },
          },
        },
      ],
    },
    {
      // The hook label is not on the pods, so hooks pass at once (a pod carrying it would hold its update).
      labels: { track: 'stable' },
      spec: {
        containers: [
          {
            name: 'main',
            image: IMAGE,
            env: [{ name: 'TRACK', valueFrom: { fieldRef: { fieldPath: "metadata.labels['track']" } } }],
            resources: { requests: { cpu: '500m', memory: '1Gi' } },
            volumeMounts: [
              { name: 'data', mountPath: '/data' },
              { name: 'cache', mountPath: '/cache' },
            ],
          },
        ],
      },
    },
  ),
  cloneSet(
    'cs-vct-selector',
    {
      replicas: 1,
      updateStrategy: { type: 'InPlaceIfPossible' },
      volumeClaimTemplates: [
        {
          metadata: { name: 'www', labels: { tier: 'disk' } },
          spec: {
            accessModes: ['ReadWriteOnce', 'ReadOnlyMany'],
            volumeMode: 'Filesystem',
            selector: { matchLabels: { disk: 'ssd' }, matchExpressions: [{ key: 'zone', operator: 'In', values: ['a', 'b'] }] },
            resources: { requests: { storage: '1e3' } },
          },
        },
      ],
    },
    { spec: { containers: [{ name: 'main', image: IMAGE, volumeMounts: [{ name: 'www', mountPath: '/www' }] }] } },
  ),
  // No pods (limits only, so the pods' requests would default to 1E cpu): the stored notations
  // and the revision are what is compared.
  cloneSet(
    'cs-quantities',
    { replicas: 0 },
    {
      spec: {
        containers: QUANTITY_NOTATIONS.map((q, i) => ({ name: `q${i}`, image: IMAGE, resources: { limits: { cpu: q, memory: q } } })),
        overhead: { cpu: '0.25' },
        volumes: [{ name: 'scratch', emptyDir: { sizeLimit: '1024Mi' } }],
      },
    },
  ),
  {
    resource: IMAGEPULLJOB,
    name: 'ipj-once',
    manifest: {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'ImagePullJob',
      metadata: { name: 'ipj-once' },
      spec: { image: 'registry.example/warm:v1', parallelism: 2, completionPolicy: { type: 'Always', ttlSecondsAfterFinished: 3600 } },
    },
  },
  {
    resource: IMAGELISTPULLJOB,
    name: 'iljob',
    manifest: {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'ImageListPullJob',
      metadata: { name: 'iljob' },
      spec: {
        images: ['registry.example/a:v1', 'registry.example/b:v1'],
        parallelism: 1,
        completionPolicy: { type: 'Always', ttlSecondsAfterFinished: 3600 },
      },
    },
  },
  {
    resource: IMAGELISTPULLJOB,
    name: 'iljob-selective',
    manifest: {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'ImageListPullJob',
      metadata: { name: 'iljob-selective' },
      spec: {
        images: ['registry.example/c:v1'],
        pullSecrets: ['pull-secret'],
        selector: {
          matchLabels: { 'kubernetes.io/os': 'linux', 'example.com/pool': 'web' },
          matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['zone-a', 'zone-b'] }],
        },
        parallelism: 3,
        pullPolicy: { timeoutSeconds: 300 },
        completionPolicy: { type: 'Never' },
        sandboxConfig: { labels: { team: 'web', tier: 'front' } },
        imagePullPolicy: 'Always',
      },
    },
  },
  // The kinds beyond CloneSet and the image jobs. The SidecarSet injects into the Advanced
  // StatefulSet's pods (label sidecar=log); the WorkloadSpread spreads cs-recreate's pods, the PUB
  // guards cs-inplace's, the PersistentPodState records asts-web's.
  kruiseObject(
    'sidecarsets',
    'apps.kruise.io/v1alpha1',
    'SidecarSet',
    'sidecar-log',
    {
      selector: { matchLabels: { sidecar: 'log' } },
      containers: [
        {
          name: 'log-agent',
          image: 'registry.example/log-agent:v1',
          args: ['--dir=/var/log/app'],
          ports: [{ name: 'metrics', containerPort: 9000 }],
          env: [{ name: 'LOG_DIR', value: '/var/log/app' }],
          resources: { limits: { cpu: '0.5', memory: '128Mi' } },
          readinessProbe: { httpGet: { path: '/ready', port: 9000 }, periodSeconds: 5 },
          lifecycle: { preStop: { exec: { command: ['sleep', '1'] } } },
          volumeMounts: [{ name: 'logs', mountPath: '/var/log/app' }],
        },
      ],
      volumes: [{ name: 'logs', emptyDir: {} }],
      updateStrategy: { type: 'RollingUpdate', maxUnavailable: 1 },
    },
    { clusterScoped: true },
  ),
  kruiseObject(
    'resourcedistributions',
    'apps.kruise.io/v1alpha1',
    'ResourceDistribution',
    'rd-config',
    {
      resource: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'shared-config' }, data: { 'app.properties': 'mode=prod' } },
      targets: { namespaceLabelSelector: { matchLabels: { [DROPIN_NAMESPACE_LABEL]: 'true' } } },
    },
    { clusterScoped: true },
  ),
  kruiseObject('statefulsets', 'apps.kruise.io/v1beta1', 'StatefulSet', 'asts-web', {
    replicas: 2,
    serviceName: 'asts-web',
    podManagementPolicy: 'Parallel',
    selector: { matchLabels: { app: 'asts-web' } },
    template: podTemplate({ app: 'asts-web', sidecar: 'log' }, { readinessGates: [{ conditionType: 'InPlaceUpdateReady' }] }),
    updateStrategy: { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible', maxUnavailable: 1 } },
  }),
  kruiseObject('daemonsets', 'apps.kruise.io/v1alpha1', 'DaemonSet', 'ads-agent', {
    selector: { matchLabels: { app: 'ads-agent' } },
    template: podTemplate({ app: 'ads-agent' }, { containers: [{ name: 'agent', image: IMAGE, resources: { requests: { cpu: '0.1' } } }] }),
    updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1 } },
  }),
  kruiseObject('broadcastjobs', 'apps.kruise.io/v1alpha1', 'BroadcastJob', 'bj-once', {
    template: podTemplate({ app: 'bj-once' }, { restartPolicy: 'Never' }),
    parallelism: 1,
    completionPolicy: { type: 'Always' },
  }),
  // Never due while the test runs (1 January, 03:00): what is compared is that nothing is created.
  kruiseObject('advancedcronjobs', 'apps.kruise.io/v1alpha1', 'AdvancedCronJob', 'acj-yearly', {
    schedule: '0 3 1 1 *',
    template: { broadcastJobTemplate: { spec: { template: podTemplate({ app: 'acj-yearly' }, { restartPolicy: 'Never' }) } } },
  }),
  kruiseObject('uniteddeployments', 'apps.kruise.io/v1alpha1', 'UnitedDeployment', 'ud-cs', {
    replicas: 3,
    selector: { matchLabels: { app: 'ud-cs' } },
    template: {
      cloneSetTemplate: {
        metadata: { labels: { app: 'ud-cs' } },
        spec: {
          selector: { matchLabels: { app: 'ud-cs' } },
          template: podTemplate(
            { app: 'ud-cs' },
            { containers: [{ name: 'main', image: IMAGE, resources: { requests: { memory: '1024Mi' } } }] },
          ),
          updateStrategy: { type: 'InPlaceIfPossible' },
        },
      },
    },
    topology: {
      subsets: [
        { name: 'subset-a', replicas: 1, tolerations: [{ key: 'dedicated', operator: 'Exists' }] },
        { name: 'subset-b', patch: { metadata: { labels: { subset: 'b' } } } },
      ],
    },
  }),
  // v1.8.2's Adaptive field name (unschedulableLastSeconds; unschedulableDuration after 1.8).
  kruiseObject('uniteddeployments', 'apps.kruise.io/v1alpha1', 'UnitedDeployment', 'ud-adaptive', {
    replicas: 2,
    selector: { matchLabels: { app: 'ud-adaptive' } },
    template: {
      advancedStatefulSetTemplate: {
        metadata: { labels: { app: 'ud-adaptive' } },
        spec: {
          selector: { matchLabels: { app: 'ud-adaptive' } },
          podManagementPolicy: 'Parallel',
          template: podTemplate({ app: 'ud-adaptive' }),
        },
      },
    },
    topology: {
      subsets: [{ name: 'first', maxReplicas: 1 }, { name: 'second' }],
      scheduleStrategy: { type: 'Adaptive', adaptive: { rescheduleCriticalSeconds: 20, unschedulableLastSeconds: 120 } },
    },
  }),
  kruiseObject('workloadspreads', 'apps.kruise.io/v1alpha1', 'WorkloadSpread', 'ws-recreate', {
    targetRef: { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'cs-recreate' },
    subsets: [
      { name: 'first', maxReplicas: 1, patch: { metadata: { labels: { spread: 'first' } } } },
      { name: 'rest', patch: { metadata: { labels: { spread: 'rest' } } } },
    ],
  }),
  kruiseObject('podunavailablebudgets', 'policy.kruise.io/v1alpha1', 'PodUnavailableBudget', 'pub-inplace', {
    selector: { matchLabels: { app: 'cs-inplace' } },
    maxUnavailable: '50%',
  }),
  kruiseObject('persistentpodstates', 'apps.kruise.io/v1alpha1', 'PersistentPodState', 'pps-web', {
    targetRef: { apiVersion: 'apps.kruise.io/v1beta1', kind: 'StatefulSet', name: 'asts-web' },
    requiredPersistentTopology: { nodeTopologyKeys: ['kubernetes.io/hostname'] },
    persistentPodStateRetentionPolicy: 'WhenDeleted',
  }),
  // The node-side kinds share one bare pod: the CRR's target, matched by the EphemeralJob and the
  // PodProbeMarker. No daemon runs the CRR or the probes on the KWOK node under v1.8.2 (the test's
  // simulated daemon only plays the kubelet's launch barrier), so the CRR ends by its deadline and
  // the NodePodProbe has probes but no results.
  {
    resource: 'pods',
    name: 'pod-tools',
    manifest: {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'pod-tools', labels: { app: 'pod-tools', [TOOLS_LABEL]: 'true' } },
      spec: { containers: [{ name: 'main', image: IMAGE }] },
    },
  },
  // Container launch priority: v1.8.2's pod webhook adds the barrier env, its controller the
  // ConfigMap keys; the simulated kubelet starts each container once its key exists.
  {
    resource: 'pods',
    name: 'pod-launch',
    manifest: {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'pod-launch', labels: { app: 'pod-launch' }, annotations: { [LAUNCH_PRIORITY_ANNOTATION]: 'Ordered' } },
      spec: {
        containers: [
          { name: 'first', image: IMAGE },
          { name: 'second', image: IMAGE },
        ],
      },
    },
  },
  // Finished by v1.8.2 itself: the deadline passes with no daemon to answer ("recreating has
  // exceeded the activeDeadlineSeconds"). No TTL, so it stays through the test.
  {
    ...kruiseObject('containerrecreaterequests', 'apps.kruise.io/v1alpha1', 'ContainerRecreateRequest', 'crr-expired', {
      podName: 'pod-tools',
      containers: [{ name: 'main' }],
      strategy: { failurePolicy: 'Fail' },
      activeDeadlineSeconds: 3,
    }),
    afterPodReady: 'pod-tools',
  },
  kruiseObject('ephemeraljobs', 'apps.kruise.io/v1alpha1', 'EphemeralJob', 'ejob-debug', {
    selector: { matchLabels: { [TOOLS_LABEL]: 'true' } },
    replicas: 1,
    parallelism: 1,
    ttlSecondsAfterFinished: 86400,
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
  kruiseObject('podprobemarkers', 'apps.kruise.io/v1alpha1', 'PodProbeMarker', 'ppm-tools', {
    selector: { matchLabels: { [TOOLS_LABEL]: 'true' } },
    probes: [
      {
        name: 'healthy',
        containerName: 'main',
        probe: { exec: { command: ['cat', '/tmp/healthy'] }, periodSeconds: 10 },
        podConditionType: 'game.kruise.io/healthy',
        markerPolicy: [{ state: 'Succeeded', labels: { 'game.kruise.io/healthy': 'true' } }],
      },
    ],
  }),
];

/**
 * Golden inputs only (hack/upstream-golden.ts), never part of a takeover: AdvancedCronJobs due every
 * minute, whose children (a Job, a BroadcastJob and its pods) record v1.8.2's child naming, labels
 * and annotations. In the takeover they would go on creating children through the window. (v1.8.2's
 * CRD has no labels or annotations in broadcastJobTemplate.metadata; jobTemplate's has them.)
 */
export const CHILD_NAMING_OBJECTS: DropInObject[] = [
  kruiseObject('advancedcronjobs', 'apps.kruise.io/v1alpha1', 'AdvancedCronJob', 'acj-job', {
    schedule: '*/1 * * * *',
    template: {
      jobTemplate: {
        metadata: { labels: { app: 'acj-job', team: 'batch' }, annotations: { 'example.com/owner': 'acj-job' } },
        spec: { template: podTemplate({ app: 'acj-job' }, { restartPolicy: 'Never' }) },
      },
    },
  }),
  kruiseObject('advancedcronjobs', 'apps.kruise.io/v1alpha1', 'AdvancedCronJob', 'acj-bj', {
    schedule: '*/1 * * * *',
    template: {
      broadcastJobTemplate: {
        spec: {
          template: {
            ...podTemplate({ app: 'acj-bj' }, { restartPolicy: 'Never' }),
            metadata: { labels: { app: 'acj-bj' }, annotations: { 'example.com/pod': 'acj-bj' } },
          },
          completionPolicy: { type: 'Always' },
        },
      },
    },
  }),
];

/**
 * Creation order: cluster-scoped objects first (the SidecarSet must exist before the pods it
 * injects), then the policies (WorkloadSpread, PUB, PersistentPodState: pods are matched when
 * created), then the workloads, then the objects that need a Ready pod (afterPodReady).
 */
export function creationOrder(objects: readonly DropInObject[]): DropInObject[] {
  const rank = (o: DropInObject) =>
    o.clusterScoped ? 0 : /^(workloadspreads|podunavailablebudgets|persistentpodstates)\./.test(o.resource) ? 1 : o.afterPodReady ? 3 : 2;
  return [...objects].sort((a, b) => rank(a) - rank(b));
}

type Settling = {
  metadata: { generation?: number };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
};

/** Why an object has not settled yet under a manager (undefined once it has), by kind. */
export function unsettled(resource: string, o: Settling): string | undefined {
  const s = o.status ?? {};
  const kind = resource.split('.')[0];
  if (kind === 'pods') {
    // Every pod of the namespace: workload pods and bare ones Ready, BroadcastJob pods finished.
    if (s.phase === 'Succeeded') return undefined;
    const ready = (s.conditions as Array<{ type: string; status: string }> | undefined)?.some(
      (c) => c.type === 'Ready' && c.status === 'True',
    );
    return ready ? undefined : `pod ${String(s.phase)}, not ready`;
  }
  if (kind === 'containerrecreaterequests') return s.phase === 'Completed' ? undefined : `phase ${String(s.phase)}`;
  if (kind === 'ephemeraljobs') return s.phase === 'Succeeded' ? undefined : `phase ${String(s.phase)}`;
  if (kind === 'imagepulljobs' || kind === 'imagelistpulljobs') return undefined;
  if (kind === 'advancedcronjobs') return s.type ? undefined : 'no status.type';
  if (kind === 'broadcastjobs') return s.completionTime ? undefined : 'not complete';
  if (kind === 'resourcedistributions')
    return (s.desired as number) > 0 && s.succeeded === s.desired ? undefined : `${String(s.succeeded)}/${String(s.desired)} distributed`;
  if (s.observedGeneration !== o.metadata.generation) return 'observedGeneration behind';
  const replicas = o.spec?.replicas as number | undefined;
  switch (kind) {
    case 'clonesets':
      return s.readyReplicas === replicas && s.updatedReadyReplicas === (s.expectedUpdatedReplicas ?? replicas) ? undefined : 'not ready';
    case 'statefulsets':
      return s.readyReplicas === replicas && s.updatedReplicas === replicas ? undefined : 'not ready';
    case 'uniteddeployments':
      return s.readyReplicas === replicas && s.updatedReplicas === replicas ? undefined : 'not ready';
    case 'daemonsets':
      return (s.desiredNumberScheduled as number) > 0 &&
        s.numberReady === s.desiredNumberScheduled &&
        s.updatedNumberScheduled === s.desiredNumberScheduled
        ? undefined
        : 'not ready';
    case 'sidecarsets':
      return (s.matchedPods as number) > 0 && s.updatedPods === s.matchedPods ? undefined : 'pods not injected';
    case 'podprobemarkers':
      return (s.matchedPods as number) > 0 ? undefined : 'no matched pods';
    case 'persistentpodstates':
      return Object.keys((s.podStates as object) ?? {}).length > 0 ? undefined : 'no pod states';
    default:
      return undefined;
  }
}

/**
 * The same objects for a second, Kruise TS-created set in a namespace of its own (the hand-back
 * check): the cluster-scoped ones renamed with the suffix so they sit beside the originals — the
 * SidecarSet selecting `sidecar: log-<suffix>`, which this set's Advanced StatefulSet carries instead
 * of `sidecar: log` (two SidecarSets injecting the same container into one pod are refused), the
 * ResourceDistribution distributing `shared-config-<suffix>` —; every namespaced object unchanged.
 */
export function kruiseTSCreatedSet(suffix: string): DropInObject[] {
  const sidecarLabel = `log-${suffix}`;
  return DROPIN_OBJECTS.map((o) => {
    const manifest = structuredClone(o.manifest) as { metadata: { name: string }; spec: Record<string, any> };
    const kind = o.resource.split('.')[0];
    if (kind === 'sidecarsets') manifest.spec.selector = { matchLabels: { sidecar: sidecarLabel } };
    if (kind === 'resourcedistributions') manifest.spec.resource.metadata.name = `${manifest.spec.resource.metadata.name}-${suffix}`;
    if (kind === 'statefulsets' && manifest.spec.template.metadata.labels.sidecar)
      manifest.spec.template.metadata.labels.sidecar = sidecarLabel;
    if (!o.clusterScoped) return { ...o, manifest };
    const name = `${o.name}-${suffix}`;
    manifest.metadata.name = name;
    return { ...o, name, manifest };
  });
}
