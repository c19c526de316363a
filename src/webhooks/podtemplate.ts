// Pod template defaulting and validation shared by the workload webhooks (CloneSet, Advanced
// StatefulSet, Advanced DaemonSet, BroadcastJob, AdvancedCronJob, UnitedDeployment).
//
// Defaulting mirrors Kruise's SetDefaultPodSpec (Kubernetes' PodSpec/Container/Probe/Volume
// defaults, except that an empty imagePullPolicy of a regular container becomes Always so images
// can be updated in place). Validation is the part of Kubernetes' ValidatePodTemplateSpec the
// workload webhooks rely on; like upstream's convertor it runs on a defaulted copy, so fields the
// defaulter would fill in are never reported as missing.

import { isDeepStrictEqual } from 'node:util';
import type {
  Container,
  PersistentVolumeClaim,
  PodSpec,
  PodTemplateSpec,
  Probe,
  Toleration,
  NodeSelectorTerm,
  Volume,
} from '../apis/core.ts';
import type { FeatureGates } from '../apis/features.ts';
import { type FieldError, duplicate, forbidden, invalid, notFound, notSupported, required } from '../apis/field-errors.ts';
import { canonicalQuantity, defaultedResourceQuantity, tryParseQuantity } from '../apis/quantity.ts';
import { isDNS1123Label, isDNS1123Subdomain, isLabelKey, isLabelValue, regexError, validateLabels } from '../util/labelselector.ts';
import type { AdmissionContext } from '../runtime/webhook/types.ts';

// ---------------------------------------------------------------------------------------------
// Defaulting

const DEFAULT_MODE = 0o644;

type QuantityList = Record<string, string | number> | undefined;

/**
 * Kubernetes SetDefaults_ResourceList as it reaches the stored object through Go's decode and
 * marshal: every value rounded up to milli-units and written in resource.Quantity's canonical
 * form ("1024Mi" → "1Gi", "0.5" → "500m", a JSON number → its string). Upstream's patch carries
 * these rewrites, and revision hashes cover the rewritten text, so they must match byte for byte.
 */
export function defaultResourceList(list: QuantityList): void {
  for (const [name, value] of Object.entries(list ?? {})) list![name] = defaultedResourceQuantity(String(value));
}

/** A quantity field Go decodes and re-marshals without defaulting it (e.g. emptyDir.sizeLimit): canonical form only. */
function canonicalField<K extends string>(holder: Partial<Record<K, unknown>> | undefined, key: K): void {
  const value = holder?.[key];
  if ((typeof value === 'string' || typeof value === 'number') && tryParseQuantity(String(value))) {
    holder![key] = canonicalQuantity(String(value));
  }
}

function canonicalList(list: QuantityList): void {
  for (const name of Object.keys(list ?? {})) canonicalField(list!, name);
}

/** Kubernetes SetDefaults_Probe (and its httpGet's path and scheme). */
export function defaultProbe(p: Probe | undefined): void {
  if (!p) return;
  p.timeoutSeconds ??= 1;
  p.periodSeconds ??= 10;
  p.successThreshold ??= 1;
  p.failureThreshold ??= 3;
  defaultHTTPGet(p.httpGet);
}

export function defaultHTTPGet(h: Probe['httpGet']): void {
  if (!h) return;
  if (!h.path) h.path = '/';
  if (!h.scheme) h.scheme = 'HTTP';
}

/** Kubernetes SetDefaults_Container's pull policy: Always for ':latest' or untagged images. */
export function defaultPullPolicyForImage(image: string | undefined): 'Always' | 'IfNotPresent' {
  const ref = image ?? '';
  if (ref.includes('@')) return 'IfNotPresent';
  const lastSlash = ref.lastIndexOf('/');
  const colon = ref.lastIndexOf(':');
  const tag = colon > lastSlash ? ref.slice(colon + 1) : '';
  return tag === '' || tag === 'latest' ? 'Always' : 'IfNotPresent';
}

function defaultContainer(c: Container, pullAlways: boolean): void {
  defaultResourceList(c.resources?.limits);
  defaultResourceList(c.resources?.requests);
  if (!c.imagePullPolicy) c.imagePullPolicy = pullAlways ? 'Always' : defaultPullPolicyForImage(c.image);
  if (!c.terminationMessagePath) c.terminationMessagePath = '/dev/termination-log';
  if (!c.terminationMessagePolicy) c.terminationMessagePolicy = 'File';
  for (const p of c.ports ?? []) if (!p.protocol) p.protocol = 'TCP';
  for (const e of c.env ?? []) {
    const ref = e.valueFrom?.fieldRef;
    if (ref && !ref.apiVersion) ref.apiVersion = 'v1';
  }
  defaultProbe(c.livenessProbe);
  defaultProbe(c.readinessProbe);
  defaultProbe(c.startupProbe);
  defaultHTTPGet(c.lifecycle?.postStart?.httpGet);
  defaultHTTPGet(c.lifecycle?.preStop?.httpGet);
}

const VOLUME_SOURCES = [
  'emptyDir',
  'hostPath',
  'configMap',
  'secret',
  'persistentVolumeClaim',
  'projected',
  'downwardAPI',
  'nfs',
  'iscsi',
  'glusterfs',
  'rbd',
  'flexVolume',
  'cinder',
  'cephfs',
  'flocker',
  'fc',
  'azureFile',
  'azureDisk',
  'vsphereVolume',
  'quobyte',
  'photonPersistentDisk',
  'portworxVolume',
  'scaleIO',
  'storageos',
  'csi',
  'ephemeral',
  'image',
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'gitRepo',
];

type FieldRefItem = { fieldRef?: { apiVersion?: string } };
/** The parts of a Volume's (loosely typed) sources that defaulting fills in. */
interface DefaultableVolume {
  [source: string]: unknown;
  emptyDir?: { sizeLimit?: string | number };
  ephemeral?: { volumeClaimTemplate?: { spec?: { resources?: { limits?: QuantityList; requests?: QuantityList } } } };
  hostPath?: { type?: string };
  secret?: { defaultMode?: number };
  configMap?: { defaultMode?: number };
  downwardAPI?: { defaultMode?: number; items?: FieldRefItem[] };
  projected?: {
    defaultMode?: number;
    sources?: Array<{ downwardAPI?: { items?: FieldRefItem[] }; serviceAccountToken?: { expirationSeconds?: number } }>;
  };
}

function defaultFieldRefs(items: FieldRefItem[] | undefined): void {
  for (const item of items ?? []) if (item.fieldRef && !item.fieldRef.apiVersion) item.fieldRef.apiVersion = 'v1';
}

/** Kruise SetDefaultPodVolumes. */
export function setDefaultPodVolumes(volumes: Volume[] | undefined): void {
  for (const v of (volumes ?? []) as DefaultableVolume[]) {
    if (!VOLUME_SOURCES.some((s) => v[s] != null)) v.emptyDir = {};
    canonicalField(v.emptyDir, 'sizeLimit');
    canonicalList(v.ephemeral?.volumeClaimTemplate?.spec?.resources?.limits);
    canonicalList(v.ephemeral?.volumeClaimTemplate?.spec?.resources?.requests);
    if (v.hostPath) v.hostPath.type ??= '';
    if (v.secret) v.secret.defaultMode ??= DEFAULT_MODE;
    if (v.configMap) v.configMap.defaultMode ??= DEFAULT_MODE;
    if (v.downwardAPI) {
      v.downwardAPI.defaultMode ??= DEFAULT_MODE;
      defaultFieldRefs(v.downwardAPI.items);
    }
    if (v.projected) {
      v.projected.defaultMode ??= DEFAULT_MODE;
      for (const src of v.projected.sources ?? []) {
        defaultFieldRefs(src.downwardAPI?.items);
        if (src.serviceAccountToken) src.serviceAccountToken.expirationSeconds ??= 3600;
      }
    }
  }
}

/**
 * Kruise SetDefaultPodSpec: restartPolicy Always, dnsPolicy ClusterFirst, 30s grace period,
 * default-scheduler, securityContext {}, container/probe/volume defaults; with gate
 * DefaultHostNetworkHostPortsInPodTemplates and hostNetwork, hostPort defaults to containerPort.
 */
export function setDefaultPodSpec(spec: PodSpec, features: FeatureGates): void {
  if (!spec.dnsPolicy) spec.dnsPolicy = 'ClusterFirst';
  if (!spec.restartPolicy) spec.restartPolicy = 'Always';
  spec.securityContext ??= {};
  spec.terminationGracePeriodSeconds ??= 30;
  if (!spec.schedulerName) spec.schedulerName = 'default-scheduler';
  if (features.DefaultHostNetworkHostPortsInPodTemplates && spec.hostNetwork) {
    for (const c of [...(spec.containers ?? []), ...(spec.initContainers ?? [])]) {
      for (const p of c.ports ?? []) if (!p.hostPort) p.hostPort = p.containerPort;
    }
  }
  setDefaultPodVolumes(spec.volumes);
  defaultResourceList((spec as { overhead?: QuantityList }).overhead);
  for (const c of spec.initContainers ?? []) defaultContainer(c, false);
  for (const c of spec.containers ?? []) defaultContainer(c, true);
  for (const c of spec.ephemeralContainers ?? []) {
    defaultResourceList(c.resources?.limits);
    defaultResourceList(c.resources?.requests);
    for (const p of c.ports ?? []) if (!p.protocol) p.protocol = 'TCP';
    for (const e of c.env ?? []) {
      const ref = e.valueFrom?.fieldRef;
      if (ref && !ref.apiVersion) ref.apiVersion = 'v1';
    }
    defaultProbe(c.livenessProbe);
    defaultProbe(c.readinessProbe);
    defaultProbe(c.startupProbe);
  }
}

/** Defaults a template's pod spec in place, creating `spec` when missing. */
export function setDefaultPodTemplate(template: PodTemplateSpec | undefined, features: FeatureGates): void {
  if (!template) return;
  template.spec ??= { containers: [] };
  setDefaultPodSpec(template.spec, features);
}

/**
 * Kruise's defaults for volumeClaimTemplates: SetDefaults_PersistentVolumeClaim (phase Pending)
 * and SetDefaults_ResourceList on requests, limits and capacity. Not the PVC spec defaults:
 * upstream never sets `volumeMode` on a claim template (the API server does it on the PVC), and
 * an added field would change the claim-template hash.
 */
export function setDefaultVolumeClaimTemplates(claims: PersistentVolumeClaim[] | undefined): void {
  for (const pvc of claims ?? []) {
    defaultResourceList(pvc.spec?.resources?.limits);
    defaultResourceList(pvc.spec?.resources?.requests);
    defaultResourceList(pvc.status?.capacity);
    pvc.status ??= {};
    if (!pvc.status.phase) pvc.status.phase = 'Pending';
  }
}

/**
 * Whether a workload's `spec.template` is defaulted, as upstream's handlers decide: never with
 * TemplateNoDefaults; on CREATE; on UPDATE only when the template differs from the stored one. A
 * label, a scale or a status-free patch must not default a template that an older defaulter (or the
 * gate) left as it is: the changed template would be a new revision and roll every pod.
 */
export function injectTemplateDefaults(
  ctx: Pick<AdmissionContext, 'features' | 'operation' | 'oldObject'>,
  obj: { spec?: { template?: unknown } },
): boolean {
  if (ctx.features.TemplateNoDefaults) return false;
  if (ctx.operation !== 'UPDATE') return true;
  return !isDeepStrictEqual(obj.spec?.template, (ctx.oldObject as { spec?: { template?: unknown } } | undefined)?.spec?.template);
}

/** A defaulted private copy of a template, as upstream's convertor validates it. */
export function defaultedTemplateCopy(template: PodTemplateSpec | undefined, features: FeatureGates): PodTemplateSpec {
  const copy: PodTemplateSpec = structuredClone(template ?? {});
  setDefaultPodTemplate(copy, features);
  return copy;
}

// ---------------------------------------------------------------------------------------------
// Validation helpers (Kubernetes wording)

/** apivalidation.ValidateNonnegativeField. */
export function validateNonnegative(value: number | undefined | null, path: string): FieldError[] {
  return typeof value === 'number' && value < 0 ? [invalid(path, value, 'must be greater than or equal to 0')] : [];
}

const PERCENT_RE = /^[0-9]+%$/;

/** apps ValidatePositiveIntOrPercent. */
export function validatePositiveIntOrPercent(v: number | string, path: string): FieldError[] {
  if (typeof v === 'string') {
    return PERCENT_RE.test(v)
      ? []
      : [invalid(path, v, regexError("a valid percent string must be a numeric string followed by an ending '%'", '[0-9]+%', '1%', '93%'))];
  }
  return validateNonnegative(v, path);
}

/** apps IsNotMoreThan100Percent. */
export function isNotMoreThan100Percent(v: number | string, path: string): FieldError[] {
  if (typeof v !== 'string' || !PERCENT_RE.test(v)) return [];
  return Number(v.slice(0, -1)) > 100 ? [invalid(path, v, 'must not be greater than 100%')] : [];
}

/**
 * Go's equality.Semantic.DeepEqual on JSON: absent, null, [], {} and "" are the same zero value (a
 * Go struct field that is not a pointer decodes "" and absence alike).
 */
export function semanticEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(prune(a)) === JSON.stringify(prune(b));
}

function prune(v: unknown): unknown {
  if (Array.isArray(v)) return v.length === 0 ? undefined : v.map((x) => prune(x) ?? null);
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) {
      const p = prune((v as Record<string, unknown>)[k]);
      if (p !== undefined) out[k] = p;
    }
    return Object.keys(out).length ? out : undefined;
  }
  return v === null || v === '' ? undefined : v;
}

// ---------------------------------------------------------------------------------------------
// Pod template validation (a subset of core ValidatePodTemplateSpec)

const RESTART_POLICIES = ['Always', 'OnFailure', 'Never'];
const DNS_POLICIES = ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None'];
const PULL_POLICIES = ['Always', 'IfNotPresent', 'Never'];
const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];
const TERMINATION_MESSAGE_POLICIES = ['File', 'FallbackToLogsOnError'];

export interface PodTemplateValidationOptions {
  /** Volume names that exist besides spec.volumes (CloneSet mocks its volumeClaimTemplates in). */
  extraVolumes?: string[];
}

export function validateAnnotations(annotations: Record<string, string> | undefined, path: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const key of Object.keys(annotations ?? {}).sort()) {
    for (const detail of isLabelKey(key.toLowerCase())) errs.push(invalid(path, key, detail));
  }
  return errs;
}

/** Name (a DNS label, unique among `names`, which it joins) and image (set, no outer whitespace). */
export function validateContainerNameAndImage(c: Pick<Container, 'name' | 'image'>, path: string, names: Set<string>): FieldError[] {
  const errs: FieldError[] = [];
  if (!c.name) errs.push(required(`${path}.name`));
  else {
    for (const detail of isDNS1123Label(c.name)) errs.push(invalid(`${path}.name`, c.name, detail));
    if (names.has(c.name)) errs.push(duplicate(`${path}.name`, c.name));
    names.add(c.name);
  }
  if (!c.image) errs.push(required(`${path}.image`));
  else if (c.image.trim() !== c.image) errs.push(invalid(`${path}.image`, c.image, 'must not have leading or trailing whitespace'));
  return errs;
}

function validateContainer(c: Container, path: string, names: Set<string>, volumes: Set<string>): FieldError[] {
  const errs: FieldError[] = validateContainerNameAndImage(c, path, names);
  if (!c.imagePullPolicy) errs.push(required(`${path}.imagePullPolicy`));
  else if (!PULL_POLICIES.includes(c.imagePullPolicy)) errs.push(notSupported(`${path}.imagePullPolicy`, c.imagePullPolicy, PULL_POLICIES));
  if (c.terminationMessagePolicy && !TERMINATION_MESSAGE_POLICIES.includes(c.terminationMessagePolicy)) {
    errs.push(notSupported(`${path}.terminationMessagePolicy`, c.terminationMessagePolicy, TERMINATION_MESSAGE_POLICIES));
  }
  (c.ports ?? []).forEach((p, i) => {
    const pp = `${path}.ports[${i}]`;
    if (!Number.isInteger(p.containerPort) || p.containerPort < 1 || p.containerPort > 65535) {
      errs.push(invalid(`${pp}.containerPort`, p.containerPort, 'must be between 1 and 65535, inclusive'));
    }
    if (p.hostPort != null && p.hostPort !== 0 && (p.hostPort < 1 || p.hostPort > 65535)) {
      errs.push(invalid(`${pp}.hostPort`, p.hostPort, 'must be between 1 and 65535, inclusive'));
    }
    if (!p.protocol) errs.push(required(`${pp}.protocol`));
    else if (!PROTOCOLS.includes(p.protocol)) errs.push(notSupported(`${pp}.protocol`, p.protocol, PROTOCOLS));
  });
  (c.env ?? []).forEach((e, i) => {
    if (!e.name) errs.push(required(`${path}.env[${i}].name`));
  });
  (c.volumeMounts ?? []).forEach((m, i) => {
    const mp = `${path}.volumeMounts[${i}]`;
    if (!m.name) errs.push(required(`${mp}.name`));
    else if (!volumes.has(m.name)) errs.push(notFound(`${mp}.name`, m.name));
    if (!m.mountPath) errs.push(required(`${mp}.mountPath`));
  });
  return errs;
}

/**
 * Validates a (defaulted) pod template at `path` (e.g. `spec.template`): labels and annotations,
 * volumes, containers (required, DNS-1123 unique names, image, pull policy, ports, mounts), pod-level
 * policies; ephemeral containers are not allowed in templates.
 */
export function validatePodTemplateSpec(template: PodTemplateSpec, path: string, opts: PodTemplateValidationOptions = {}): FieldError[] {
  const errs: FieldError[] = [];
  errs.push(...validateLabels(template.metadata?.labels, `${path}.metadata.labels`));
  errs.push(...validateAnnotations(template.metadata?.annotations, `${path}.metadata.annotations`));
  const spec = template.spec ?? ({ containers: [] } as PodSpec);
  const sp = `${path}.spec`;

  const volumes = new Set<string>();
  (spec.volumes ?? []).forEach((v, i) => {
    const vp = `${sp}.volumes[${i}]`;
    if (!v.name) errs.push(required(`${vp}.name`));
    else {
      for (const detail of isDNS1123Label(v.name)) errs.push(invalid(`${vp}.name`, v.name, detail));
      if (volumes.has(v.name)) errs.push(duplicate(`${vp}.name`, v.name));
      volumes.add(v.name);
    }
  });
  for (const name of opts.extraVolumes ?? []) volumes.add(name);

  const names = new Set<string>();
  (spec.initContainers ?? []).forEach((c, i) => errs.push(...validateContainer(c, `${sp}.initContainers[${i}]`, names, volumes)));
  if (!spec.containers?.length) errs.push(required(`${sp}.containers`));
  (spec.containers ?? []).forEach((c, i) => errs.push(...validateContainer(c, `${sp}.containers[${i}]`, names, volumes)));

  if (!spec.restartPolicy) errs.push(required(`${sp}.restartPolicy`));
  else if (!RESTART_POLICIES.includes(spec.restartPolicy))
    errs.push(notSupported(`${sp}.restartPolicy`, spec.restartPolicy, RESTART_POLICIES));
  if (!spec.dnsPolicy) errs.push(required(`${sp}.dnsPolicy`));
  else if (!DNS_POLICIES.includes(spec.dnsPolicy)) errs.push(notSupported(`${sp}.dnsPolicy`, spec.dnsPolicy, DNS_POLICIES));
  errs.push(...validateLabels(spec.nodeSelector, `${sp}.nodeSelector`));
  if (spec.activeDeadlineSeconds != null && (spec.activeDeadlineSeconds < 1 || spec.activeDeadlineSeconds > 2147483647)) {
    errs.push(invalid(`${sp}.activeDeadlineSeconds`, spec.activeDeadlineSeconds, 'must be between 1 and 2147483647, inclusive'));
  }
  errs.push(...validateNonnegative(spec.terminationGracePeriodSeconds, `${sp}.terminationGracePeriodSeconds`));
  if (spec.serviceAccountName) {
    for (const detail of isDNS1123Subdomain(spec.serviceAccountName)) {
      errs.push(invalid(`${sp}.serviceAccountName`, spec.serviceAccountName, detail));
    }
  }
  errs.push(...validateTolerations(spec.tolerations, `${sp}.tolerations`));
  if (spec.ephemeralContainers?.length) {
    errs.push(forbidden(`${sp}.ephemeralContainers`, 'ephemeral containers not allowed in pod template'));
  }
  return errs;
}

/** ValidateObjectMeta's name check for kinds named like DNS subdomains. */
/**
 * genericvalidation.ValidateObjectMeta as upstream's workload webhooks call it: the name (by nameFn),
 * labels and annotations.
 */
export function validateObjectMeta(
  metadata: { name?: string; labels?: Record<string, string>; annotations?: Record<string, string> } | undefined,
  nameFn: (n: string) => string[] = isDNS1123Subdomain,
): FieldError[] {
  const name = metadata?.name;
  return [
    ...(name ? nameFn(name).map((detail) => invalid('metadata.name', name, detail)) : []),
    ...validateLabels(metadata?.labels, 'metadata.labels'),
    ...validateAnnotations(metadata?.annotations, 'metadata.annotations'),
  ];
}

/** core ValidateTolerations. */
export function validateTolerations(tolerations: Toleration[] | undefined, path: string): FieldError[] {
  const errs: FieldError[] = [];
  (tolerations ?? []).forEach((t, i) => {
    const tp = `${path}[${i}]`;
    if (t.key) for (const detail of isLabelKey(t.key)) errs.push(invalid(`${tp}.key`, t.key, detail));
    if (!t.key && t.operator !== 'Exists') {
      errs.push(
        invalid(
          `${tp}.operator`,
          t.operator ?? '',
          'operator must be Exists when `key` is empty, which means "match all values and all keys"',
        ),
      );
    }
    if (t.tolerationSeconds != null && t.effect !== 'NoExecute') {
      errs.push(invalid(`${tp}.effect`, t.effect ?? '', "effect must be 'NoExecute' when `tolerationSeconds` is set"));
    }
    switch (t.operator ?? '') {
      case '':
      case 'Equal':
        for (const detail of isLabelValue(t.value ?? '')) errs.push(invalid(`${tp}.operator`, t.value ?? '', detail));
        break;
      case 'Exists':
        if (t.value) errs.push(invalid(`${tp}.operator`, t, "value must be empty when `operator` is 'Exists'"));
        break;
      default:
        errs.push(notSupported(`${tp}.operator`, t.operator, ['Equal', 'Exists']));
    }
    if (t.effect && !['NoSchedule', 'PreferNoSchedule', 'NoExecute'].includes(t.effect)) {
      errs.push(notSupported(`${tp}.effect`, t.effect, ['NoSchedule', 'PreferNoSchedule', 'NoExecute']));
    }
  });
  return errs;
}

const NODE_SELECTOR_OPS = ['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt'];

/** core ValidateNodeSelectorTerm. */
export function validateNodeSelectorTerm(term: NodeSelectorTerm | undefined, path: string): FieldError[] {
  const errs: FieldError[] = [];
  (term?.matchExpressions ?? []).forEach((req, i) => {
    const rp = `${path}.matchExpressions[${i}]`;
    const values = req.values ?? [];
    switch (req.operator) {
      case 'In':
      case 'NotIn':
        if (values.length === 0) errs.push(required(`${rp}.values`, "must be specified when `operator` is 'In' or 'NotIn'"));
        break;
      case 'Exists':
      case 'DoesNotExist':
        if (values.length > 0) errs.push(forbidden(`${rp}.values`, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
        break;
      case 'Gt':
      case 'Lt':
        if (values.length !== 1) errs.push(required(`${rp}.values`, "must be specified single value when `operator` is 'Lt' or 'Gt'"));
        break;
      default:
        errs.push(notSupported(`${rp}.operator`, req.operator ?? '', NODE_SELECTOR_OPS));
    }
    // A key left out decodes as Go's zero value.
    const key = req.key ?? '';
    for (const detail of isLabelKey(key)) errs.push(invalid(`${rp}.key`, key, detail));
  });
  (term?.matchFields ?? []).forEach((req, i) => {
    const rp = `${path}.matchFields[${i}]`;
    if (req.key !== 'metadata.name') errs.push(invalid(`${rp}.key`, req.key, 'not a valid field selector key'));
    if (req.operator !== 'In' && req.operator !== 'NotIn')
      errs.push(invalid(`${rp}.operator`, req.operator, 'not a valid selector operator'));
    if ((req.values ?? []).length !== 1)
      errs.push(required(`${rp}.values`, "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"));
  });
  return errs;
}
