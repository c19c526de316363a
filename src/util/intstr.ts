// IntOrString scaling. Two parsers exist upstream and they differ on purpose:
//   * Kubernetes (apimachinery intstr.GetScaledValueFromIntOrPercent): the percent must be an integer.
//   * Kruise (pkg/util GetScaledValueFromIntOrPercent): the percent may be a float ("99.99%").
// Both reject a string without "%" (e.g. "90") and return int values unchanged.

export type IntOrString = number | string;

export type PercentParser = 'kubernetes' | 'kruise';

const GO_INT_RE = /^[+-]?\d+$/;
const GO_FLOAT_RE = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

const prefix = 'invalid value for IntOrString: ';

function parsePercent(raw: string, parser: PercentParser): number {
  if (!raw.endsWith('%')) throw new Error(`${prefix}invalid type: string is not a percentage`);
  const s = raw.slice(0, -1);
  if (parser === 'kubernetes') {
    if (!GO_INT_RE.test(s))
      throw new Error(`${prefix}invalid value ${JSON.stringify(raw)}: strconv.Atoi: parsing ${JSON.stringify(s)}: invalid syntax`);
    const v = BigInt(s);
    if (v < INT64_MIN || v > INT64_MAX) {
      throw new Error(`${prefix}invalid value ${JSON.stringify(raw)}: strconv.Atoi: parsing ${JSON.stringify(s)}: value out of range`);
    }
    return Number(v);
  }
  // Plain decimal notation only: Go's ParseFloat would also take "NaN", "Inf" and hex floats,
  // none of which is a meaningful percentage.
  const v = GO_FLOAT_RE.test(s) ? Number(s) : NaN;
  if (Number.isNaN(v))
    throw new Error(`${prefix}invalid value ${JSON.stringify(raw)}: strconv.ParseFloat: parsing ${JSON.stringify(s)}: invalid syntax`);
  if (!Number.isFinite(v))
    throw new Error(`${prefix}invalid value ${JSON.stringify(raw)}: strconv.ParseFloat: parsing ${JSON.stringify(s)}: value out of range`);
  return v;
}

function scale(v: IntOrString | null | undefined, total: number, roundUp: boolean, parser: PercentParser): number {
  if (v === null || v === undefined) throw new Error('nil value for IntOrString');
  if (typeof v === 'number') {
    // A decoded Go IntOrString can only hold an int32.
    if (!Number.isInteger(v)) throw new Error(`${prefix}invalid type: neither int nor percentage`);
    return v;
  }
  const pct = parsePercent(v, parser);
  const scaled = roundUp ? Math.ceil((pct * total) / 100) : Math.floor((pct * total) / 100);
  return scaled === 0 ? 0 : scaled; // never -0
}

/**
 * Kubernetes intstr.GetScaledValueFromIntOrPercent: ints as-is; "N%" (integer N) scaled against
 * total with ceil (roundUp) or floor. Throws with Kubernetes's message on "90", "1.5%", null, ….
 */
export function getScaledValueFromIntOrPercent(v: IntOrString | null | undefined, total: number, roundUp: boolean): number {
  return scale(v, total, roundUp, 'kubernetes');
}

/** Kruise's variant: like the Kubernetes one, but the percentage may be fractional ("0.01%"). */
export function getKruiseScaledValueFromIntOrPercent(v: IntOrString | null | undefined, total: number, roundUp: boolean): number {
  return scale(v, total, roundUp, 'kruise');
}

/**
 * Kruise CalculatePartitionReplicas: how many pods stay on the old revision. null partition → 0;
 * null replicas counts as 1; percentages round up (so "1%" keeps at least one old pod), but any
 * percentage other than "100%" leaves at least one pod to update when replicas > 1; clamped to
 * [0, replicas]. Throws on an unparsable partition.
 */
export function calculatePartitionReplicas(partition: IntOrString | null | undefined, replicas: number | null | undefined): number {
  if (partition === null || partition === undefined) return 0;
  const total = replicas ?? 1;
  let value = getKruiseScaledValueFromIntOrPercent(partition, total, true);
  if (total > 1 && value === total && typeof partition === 'string' && partition !== '100%') value = total - 1;
  return Math.max(Math.min(value, total), 0);
}

/** Whether v is an int or a percentage the chosen parser accepts (webhook validation). */
export function isValidIntOrPercent(v: IntOrString | null | undefined, parser: PercentParser = 'kruise'): boolean {
  try {
    scale(v, 1, true, parser);
    return true;
  } catch {
    return false;
  }
}

/**
 * Why an IntOrString that counts things (a pull parallelism) is refused, in upstream's words with
 * the field's name first; undefined when it is a non-negative int32 or a string holding one. A
 * percentage is never accepted, a string must pass strconv.ParseInt(s, 10, 32).
 */
export function nonNegativeCountError(v: IntOrString, name: string): string | undefined {
  let value = v as number;
  if (typeof v === 'string') {
    if (v.endsWith('%')) return `${name} does not support percentage value`;
    if (!GO_INT_RE.test(v)) return `${name} must be a valid integer: strconv.ParseInt: parsing ${JSON.stringify(v)}: invalid syntax`;
    value = Number(v);
    if (value < -2147483648 || value > 2147483647) {
      return `${name} must be a valid integer: strconv.ParseInt: parsing ${JSON.stringify(v)}: value out of range`;
    }
  }
  return value < 0 ? `${name} must be non-negative` : undefined;
}

/**
 * apimachinery intstr.GetValueFromIntOrPercent (the deprecated, lenient one): a string is a
 * percentage once every '%' is removed, so "5" reads as 5%. Upstream's WorkloadSpread uses it.
 */
export function getLenientValueFromIntOrPercent(v: IntOrString, total: number, roundUp: boolean): number {
  if (typeof v === 'number') return v;
  const s = v.replaceAll('%', '');
  if (!GO_INT_RE.test(s))
    throw new Error(`${prefix}invalid value ${JSON.stringify(v)}: strconv.Atoi: parsing ${JSON.stringify(s)}: invalid syntax`);
  const pct = Number(s);
  return roundUp ? Math.ceil((pct * total) / 100) : Math.floor((pct * total) / 100);
}
