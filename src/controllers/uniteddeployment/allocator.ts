// UnitedDeployment replica allocation (spec §9.3, upstream allocator.go): how spec.replicas is split
// over the topology subsets. Four allocators, chosen as upstream's NewReplicaAllocator does:
// reservation (Adaptive + reserveUnschedulablePods), adaptive (Adaptive), min/max (any subset with
// minReplicas/maxReplicas), specific (everything else). Pure: the observed subsets come in, the next
// replicas per subset go out; invalid combinations throw AllocationError (the controller reports it).

import type { UnitedDeploymentSpec } from '../../apis/apps/uniteddeployment.ts';
import type { IntOrString } from '../../util/intstr.ts';

export const MAX_INT32 = 2147483647;

type Subset = NonNullable<NonNullable<UnitedDeploymentSpec['topology']>['subsets']>[number];

/** What the allocators read of an existing subset workload (upstream Subset.Spec/Status). */
export interface ObservedSubset {
  /** The workload's spec.replicas. */
  replicas: number;
  /**
   * Adaptive: the pods the subset runs, i.e. the workload's status.replicas less its pods pending
   * past rescheduleCriticalSeconds (upstream's getSubsetRunningReplicas): ready or not, a pod that
   * was placed counts.
   */
  runningReplicas: number;
  /** Adaptive: the subset is unschedulable this round (pending pods timed out, or reserved pods). */
  unschedulable: boolean;
  /** Reservation: the subset's Schedulable condition is False (newly created pods become reserved). */
  markedAsUnschedulable: boolean;
  /** Reservation: pods reserved in the subset. */
  reservedPods: number;
}

export class AllocationError extends Error {}

export type AllocatorName = 'specific' | 'minMax' | 'adaptive' | 'reservation';

export function allocatorFor(spec: UnitedDeploymentSpec): AllocatorName {
  const strategy = spec.topology?.scheduleStrategy;
  const adaptive = strategy?.type === 'Adaptive';
  if (adaptive && strategy?.adaptive?.reserveUnschedulablePods) return 'reservation';
  if (adaptive) return 'adaptive';
  if ((spec.topology?.subsets ?? []).some((s) => s.minReplicas != null || s.maxReplicas != null)) return 'minMax';
  return 'specific';
}

/**
 * ParseSubsetReplicas: an int ≥ 0 as is; a percent must be an integer 0..100 and needs the UD's
 * replicas (udReplicas ≥ 0); value = udReplicas·pct/100 rounded half up.
 */
export function parseSubsetReplicas(udReplicas: number, v: IntOrString): number {
  if (typeof v === 'number') {
    if (v < 0) throw new AllocationError(`subset replicas (${v}) should not be less than 0`);
    return v;
  }
  if (udReplicas < 0) throw new AllocationError(`subsetReplicas (${v}) should not be string when unitedDeployment replicas is empty`);
  if (!v.endsWith('%'))
    throw new AllocationError(`subset replicas (${v}) only support integer value or percentage value with a suffix '%'`);
  const digits = v.slice(0, -1);
  if (!/^[+-]?\d+$/.test(digits)) throw new AllocationError(`subset replicas (${v}) should be correct percentage integer`);
  const pct = Number(digits);
  if (pct > 100 || pct < 0) throw new AllocationError(`subset replicas (${v}) should be in range [0, 100]`);
  return Math.floor((udReplicas * pct) / 100 + 0.5);
}

/** The next spec.replicas of every subset of the UD, keyed by subset name. */
export function allocateReplicas(spec: UnitedDeploymentSpec, existing: ReadonlyMap<string, ObservedSubset>): Map<string, number> {
  switch (allocatorFor(spec)) {
    case 'reservation':
      return reservationAllocate(spec, existing);
    case 'adaptive':
      return adaptiveAllocate(spec, existing);
    case 'minMax':
      return minMaxAllocate(spec);
    case 'specific':
      return specificAllocate(spec, existing);
  }
}

const subsetsOf = (spec: UnitedDeploymentSpec): readonly Subset[] => spec.topology?.subsets ?? [];

// ---------------------------------------------------------------------------------------------
// specific

function specificAllocate(spec: UnitedDeploymentSpec, existing: ReadonlyMap<string, ObservedSubset>): Map<string, number> {
  const expected = spec.replicas ?? -1;
  // Sorted by the workloads' current replicas, then name: the remainder goes to the largest.
  const infos = subsetsOf(spec).map((s) => ({ name: s.name, replicas: existing.get(s.name)?.replicas ?? 0, specified: false }));
  infos.sort((a, b) => a.replicas - b.replicas || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

  // Upstream skips (logs) a subset whose replicas do not parse: it then counts as unspecified.
  const specifiedMap = new Map<string, number>();
  for (const s of subsetsOf(spec)) {
    if (s.replicas == null) continue;
    try {
      specifiedMap.set(s.name, parseSubsetReplicas(expected, s.replicas));
    } catch {
      // not specified
    }
  }

  let specifiedSum = 0;
  for (const v of specifiedMap.values()) specifiedSum += v;
  const specifiedCount = infos.filter((i) => specifiedMap.has(i.name)).length;
  if (expected !== -1) {
    if (specifiedSum > expected) {
      throw new AllocationError(`specified subsets' replica (${specifiedSum}) is greater than UnitedDeployment replica (${expected})`);
    } else if (specifiedSum < expected && specifiedCount === infos.length) {
      throw new AllocationError(`specified subsets' replica (${specifiedSum}) is less than UnitedDeployment replica (${expected})`);
    }
  } else if (specifiedCount !== infos.length) {
    throw new AllocationError('all subsets must be specified when UnitedDeployment replica is unspecified');
  }

  for (const info of infos) {
    const v = specifiedMap.get(info.name);
    if (v !== undefined) {
      info.replicas = v;
      info.specified = true;
    }
  }
  let left = infos.length - specifiedCount;
  if (left !== 0) {
    const allocatable = expected - specifiedSum;
    const average = Math.trunc(allocatable / left);
    let remainder = allocatable % left;
    for (let i = infos.length - 1; i >= 0 && left > 0; i--) {
      const info = infos[i];
      if (info.specified) continue;
      info.replicas = remainder > 0 ? average + 1 : average;
      if (remainder > 0) remainder--;
      left--;
    }
  }
  return new Map(infos.map((i) => [i.name, i.replicas]));
}

// ---------------------------------------------------------------------------------------------
// min/max, adaptive

/** min defaults to 0, max to MaxInt32; a value that does not parse counts as 0 (as upstream ignores the error). */
function parseMinMax(replicas: number, subset: Subset): [number, number] {
  const parse = (v: IntOrString) => {
    try {
      return parseSubsetReplicas(replicas, v);
    } catch {
      return 0;
    }
  };
  return [subset.minReplicas != null ? parse(subset.minReplicas) : 0, subset.maxReplicas != null ? parse(subset.maxReplicas) : MAX_INT32];
}

function rawMinMax(replicas: number, subsets: readonly Subset[]): { min: Map<string, number>; max: Map<string, number> } {
  const min = new Map<string, number>();
  const max = new Map<string, number>();
  subsets.forEach((s, index) => {
    const [lo, hi] = parseMinMax(replicas, s);
    if (lo > hi) throw new AllocationError(`subset[${index}].maxReplicas(${hi}) must be more than or equal to minReplicas(${lo})`);
    min.set(s.name, lo);
    max.set(s.name, hi);
  });
  return { min, max };
}

/** allocateByMinMaxMap: pass 1 gives every subset min(min, rest), pass 2 min(max − min, rest), both in spec order. */
export function allocateByMinMax(
  replicas: number,
  min: ReadonlyMap<string, number>,
  max: ReadonlyMap<string, number>,
  subsets: readonly { name: string }[],
): Map<string, number> {
  let allocated = 0;
  const out = new Map<string, number>();
  for (const s of subsets) {
    const add = Math.max(Math.min(min.get(s.name) ?? 0, replicas - allocated), 0);
    out.set(s.name, add);
    allocated += add;
  }
  if (allocated >= replicas) return out;
  for (const s of subsets) {
    const add = Math.max(Math.min((max.get(s.name) ?? 0) - (min.get(s.name) ?? 0), replicas - allocated), 0);
    out.set(s.name, (out.get(s.name) ?? 0) + add);
    allocated += add;
  }
  return out;
}

function minMaxAllocate(spec: UnitedDeploymentSpec): Map<string, number> {
  const replicas = spec.replicas ?? 0;
  const { min, max } = rawMinMax(replicas, subsetsOf(spec));
  return allocateByMinMax(replicas, min, max, subsetsOf(spec));
}

function adaptiveAllocate(spec: UnitedDeploymentSpec, existing: ReadonlyMap<string, ObservedSubset>): Map<string, number> {
  const replicas = spec.replicas ?? 0;
  const { min, max } = rawMinMax(replicas, subsetsOf(spec));
  for (const s of subsetsOf(spec)) {
    let lo = min.get(s.name) ?? 0;
    let hi = max.get(s.name) ?? MAX_INT32;
    const observed = existing.get(s.name);
    const unschedulable = observed?.unschedulable ?? false;
    const running = observed?.runningReplicas ?? 0;
    if (unschedulable && observed) {
      // An unschedulable subset can only shrink: at most what runs there, even below its minReplicas.
      lo = Math.min(running, lo);
      hi = Math.min(running, hi);
    }
    // Running pods of a schedulable subset are never taken away, ready or not.
    if (!unschedulable && running > lo) lo = Math.min(running, hi);
    min.set(s.name, lo);
    max.set(s.name, hi);
  }
  return allocateByMinMax(replicas, min, max, subsetsOf(spec));
}

// ---------------------------------------------------------------------------------------------
// reservation

class ReservationRecord {
  allocated = 0;
  constructor(public maxAllocatable: number) {}

  /**
   * Raises the subset to `to` (within `rest`) and returns how much of `rest` that used up: replicas
   * beyond maxAllocatable are expected to stay reserved, so they do not count and are allocated
   * again to later subsets as temporary pods.
   */
  allocate(to: number, rest: number): number {
    let toAdd = Math.min(to - this.allocated, rest);
    this.allocated += toAdd;
    this.maxAllocatable -= toAdd;
    if (this.maxAllocatable < 0) {
      toAdd += this.maxAllocatable;
      return Math.max(0, toAdd);
    }
    return toAdd;
  }
}

function reservationAllocate(spec: UnitedDeploymentSpec, existing: ReadonlyMap<string, ObservedSubset>): Map<string, number> {
  let replicas = spec.replicas ?? 0;
  const subsets = subsetsOf(spec);
  const { min, max } = rawMinMax(replicas, subsets);
  const records = new Map<string, ReservationRecord>();
  for (const s of subsets) {
    const observed = existing.get(s.name);
    const allocatable = !observed || (!observed.unschedulable && !observed.markedAsUnschedulable);
    records.set(s.name, new ReservationRecord(allocatable ? MAX_INT32 : observed.replicas - observed.reservedPods));
  }
  const result = () => new Map(subsets.map((s) => [s.name, records.get(s.name)!.allocated]));
  for (const s of subsets) {
    replicas -= records.get(s.name)!.allocate(min.get(s.name)!, replicas);
    if (replicas <= 0) return result();
  }
  for (const s of subsets) {
    const observed = existing.get(s.name);
    const to = !observed || !observed.unschedulable ? max.get(s.name)! : observed.replicas;
    replicas -= records.get(s.name)!.allocate(to, replicas);
    if (replicas <= 0) return result();
  }
  return result();
}
