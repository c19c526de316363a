// Container-level checks of a SidecarSet: the sidecar-only fields (inject/share policies,
// transferEnv downward API, hot upgrade, resourcesPolicy) and, like upstream, the Kubernetes pod
// checks run on a fake pod built from the sidecar containers and volumes. Paths follow upstream's
// (including its odd `spec.container.podInjectPolicy` and `spec[i].transferEnv`).
import type { SidecarContainer } from '../../apis/apps/sidecarset.ts';
import type { PodSpec, Volume } from '../../apis/core.ts';
import { type FieldError, invalid, notSupported, required } from '../../apis/field-errors.ts';
import { isLabelKey } from '../../util/labelselector.ts';
import { evaluateExpr, ExprError } from '../../util/resource-expr.ts';
import { validatePodTemplateSpec } from '../podtemplate.ts';
import { isNativeSidecar } from './mutating.ts';

const DOWNWARD_PATHS = ['metadata.annotations', 'metadata.labels', 'metadata.name'];
const SUBSCRIPTED_RE = /^(metadata\.(?:labels|annotations))\['(.*)'\]$/;

function validateTransferEnvFieldRef(c: SidecarContainer, path: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const t of c.transferEnv ?? []) {
    const ref = t.sourceContainerNameFrom?.fieldRef;
    if (!ref) continue;
    const fp = `${path}.fieldRef`;
    if (!ref.apiVersion) {
      errs.push(required(`${fp}.apiVersion`));
      continue;
    }
    if (!ref.fieldPath) {
      errs.push(required(`${fp}.fieldPath`));
      continue;
    }
    const m = SUBSCRIPTED_RE.exec(ref.fieldPath);
    if (m) {
      const key = m[1] === 'metadata.annotations' ? m[2]!.toLowerCase() : m[2]!;
      for (const detail of isLabelKey(key)) errs.push(invalid(fp, m[2], detail));
    } else if (!DOWNWARD_PATHS.includes(ref.fieldPath)) {
      errs.push(notSupported(`${fp}.fieldPath`, ref.fieldPath, DOWNWARD_PATHS));
    }
  }
  return errs;
}

function validateHotUpgrade(c: SidecarContainer, path: string, allNames: Set<string>): FieldError[] {
  if (c.upgradeStrategy?.upgradeType !== 'HotUpgrade') return [];
  const errs: FieldError[] = [];
  if (!c.upgradeStrategy.hotUpgradeEmptyImage) {
    errs.push(required(`${path}.upgradeStrategy.hotUpgradeEmptyImage`, 'hotUpgradeEmptyImage is required when upgradeType is HotUpgrade'));
  } else if (c.upgradeStrategy.hotUpgradeEmptyImage === c.image) {
    errs.push(
      invalid(
        `${path}.upgradeStrategy.hotUpgradeEmptyImage`,
        c.upgradeStrategy.hotUpgradeEmptyImage,
        'hotUpgradeEmptyImage must be different from the container image',
      ),
    );
  }
  // The hot-upgrade pair is named <name>-1 / <name>-2 in pods.
  for (const suffix of ['-1', '-2']) {
    if (allNames.has(`${c.name}${suffix}`)) {
      errs.push(invalid(`${path}.name`, c.name, `container name ${c.name}${suffix} conflicts with the hot upgrade container of ${c.name}`));
    }
  }
  return errs;
}

// Upstream (master) reports these below spec[i] (its container paths start at the root), the
// resources conflict and a missing expression ending the check.
function validateResourcesPolicy(c: SidecarContainer, path: string, init: boolean): FieldError[] {
  const policy = c.resourcesPolicy;
  if (!policy) return [];
  const pp = `${path}.resourcesPolicy`;
  const errs: FieldError[] = [];
  if (init && !isNativeSidecar(c))
    errs.push(invalid(pp, policy, 'resourcesPolicy is only supported for containers with RestartPolicy Always'));
  const res = c.resources ?? {};
  if (Object.keys(res.limits ?? {}).length + Object.keys(res.requests ?? {}).length > 0) {
    return [...errs, invalid(pp, policy, 'resourcesPolicy and resources cannot be configured together')];
  }
  if (policy.targetContainersMode !== 'sum' && policy.targetContainersMode !== 'max') {
    errs.push(notSupported(`${pp}.targetContainersMode`, policy.targetContainersMode ?? '', ['sum', 'max']));
  }
  if (!policy.targetContainersNameRegex) errs.push(required(`${pp}.targetContainersNameRegex`, 'invalid empty regex'));
  else {
    try {
      new RegExp(policy.targetContainersNameRegex);
    } catch (e) {
      errs.push(
        invalid(`${pp}.targetContainersNameRegex`, policy.targetContainersNameRegex, `invalid regex pattern: ${(e as Error).message}`),
      );
    }
  }
  const expr = policy.resourcesExpr ?? {};
  if (!expr.limits && !expr.requests)
    return [...errs, invalid(`${pp}.resourcesExpr`, expr, 'at least one of limits or requests must be configured')];
  // Upstream parses each expression with its variable bound to the number 1.
  for (const kind of ['limits', 'requests'] as const) {
    for (const res of ['cpu', 'memory'] as const) {
      const value = expr[kind]?.[res];
      if (!value) continue;
      try {
        evaluateExpr(value, new Map([[res, { kind: 'number', n: 1 }]]));
      } catch (err) {
        if (!(err instanceof ExprError)) throw err;
        errs.push(invalid(`${pp}.resourcesExpr.${kind}.${res}`, value, `invalid expression: ${err.message}`));
      }
    }
  }
  return errs;
}

/** Pod-level checks on the fake pod upstream builds: `spec.initContainers[i]…`, `spec.containers[i]…`. */
function validateFakePod(init: SidecarContainer[], containers: SidecarContainer[], volumes: Volume[] | undefined): FieldError[] {
  const spec: PodSpec = {
    // The pod check needs one container; upstream supplies a harmless one when only init containers exist.
    containers: containers.length
      ? containers
      : [{ name: 'test', image: 'busybox', imagePullPolicy: 'IfNotPresent', terminationMessagePolicy: 'File' }],
    initContainers: init,
    volumes,
    dnsPolicy: 'ClusterFirst',
    restartPolicy: 'Always',
    serviceAccountName: 'default',
  };
  return validatePodTemplateSpec({ spec }, '').map((e) => ({ ...e, field: e.field.replace(/^\./, '') }));
}

export function validateSidecarContainers(
  init: SidecarContainer[],
  containers: SidecarContainer[],
  volumes: Volume[] | undefined,
): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set([...init, ...containers].map((c) => c.name));
  init.forEach((c, i) => {
    errs.push(...validateResourcesPolicy(c, `spec[${i}]`, true));
  });
  containers.forEach((c, i) => {
    if (c.podInjectPolicy !== 'BeforeAppContainer' && c.podInjectPolicy !== 'AfterAppContainer') {
      errs.push(invalid('spec.container.podInjectPolicy', c.podInjectPolicy ?? '', 'unsupported pod inject policy'));
    }
    const share = c.shareVolumePolicy?.type;
    if (share !== 'enabled' && share !== 'disabled') {
      errs.push(invalid('spec.container.shareVolumePolicy', c.shareVolumePolicy ?? {}, 'unsupported share volume policy'));
    }
    errs.push(...validateTransferEnvFieldRef(c, `spec[${i}].transferEnv`));
    errs.push(...validateHotUpgrade(c, `spec.containers[${i}]`, names));
    errs.push(...validateResourcesPolicy(c, `spec[${i}]`, false));
  });
  errs.push(...validateFakePod(init, containers, volumes));
  return errs;
}
