// resource.Quantity (k8s.io/apimachinery/pkg/api/resource), exactly: the parse grammar, the value
// (an exact decimal; never a float), comparison, and the text Go writes when it marshals a parsed
// quantity. Used wherever quantities are read (validation, resource policies, PVC resize checks).
//
// Go's rules, kept here on purpose:
//  * the value is rounded up (away from zero) to a multiple of 1n; binary (Ki..Ei) values are capped
//    at 2^63-1; a binary value between 0 and 1 becomes DecimalSI;
//  * a quantity parsed on Go's fast path whose text is already "canonical" keeps that text, so
//    "+1", "01", "1.G" and "1e3" marshal unchanged, while "1024Mi" marshals as "1Gi" and "0.5" as
//    "500m";
//  * the canonical form of a decimal value uses the largest SI suffix whose exponent is a multiple
//    of 3 that keeps the mantissa an integer (an exponent outside n..E gets no suffix, as in Go);
//    DecimalExponent keeps the e-notation, with no suffix for exponent 0 ("1.5e3" → "1500");
//    BinarySI uses the largest power of 1024 that divides an integral value of at least 1024,
//    otherwise the value is written as DecimalSI ("0.5Ki" → "512", "0.9Ki" → "921600m").

export type QuantityFormat = 'DecimalSI' | 'BinarySI' | 'DecimalExponent';

export interface Quantity {
  /** The value is exactly unscaled × 10^exponent. */
  readonly unscaled: bigint;
  readonly exponent: number;
  readonly format: QuantityFormat;
  /** The input text, when Go keeps it as the marshalled form (already canonical). */
  readonly text?: string;
  /** Parsed off Go's int64 fast path: Go holds the value as an inf.Dec. */
  readonly decimal?: true;
}

/** Go's parse errors, with Go's messages. */
export class QuantityError extends Error {
  override name = 'QuantityError';
}

const SPLIT_RE = '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$';
export const ERR_FORMAT_WRONG = `quantities must match the regular expression '${SPLIT_RE}'`;
export const ERR_NUMERIC = 'unable to parse numeric part of quantity';
export const ERR_SUFFIX = "unable to parse quantity's suffix";

const DECIMAL_SUFFIXES: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY_SUFFIXES: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const DECIMAL_BY_EXPONENT = new Map(Object.entries(DECIMAL_SUFFIXES).map(([s, e]) => [e, s]));
const BINARY_BY_EXPONENT = new Map(Object.entries(BINARY_SUFFIXES).map(([s, e]) => [e, s]));

const MAX_INT64 = (1n << 63n) - 1n;
const MAX_INT64_FACTORS = 18;
const NANO = -9;
const SUFFIX_CHARS = new Set('eEinumkKMGTP');
const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';

interface Parts {
  positive: boolean;
  /** Integer digits without leading zeros ("0" when there are none). */
  num: string;
  /** Fraction digits as written. */
  denom: string;
  suffix: string;
  /** Whether the number before the suffix has a digit at all ("." and "+." have none). */
  hasDigits: boolean;
}

// apimachinery parseQuantityString: sign, integer digits, optional fraction, then a suffix made of
// suffix letters, an optional sign and digits.
function splitQuantity(str: string): Parts {
  let pos = 0;
  const end = str.length;
  let positive = true;
  if (str[0] === '-') {
    positive = false;
    pos++;
  } else if (str[0] === '+') {
    pos++;
  }
  while (pos < end && str[pos] === '0') pos++;
  if (pos >= end) return { positive, num: '0', denom: '', suffix: '', hasDigits: true };
  let i = pos;
  while (isDigit(str[i])) i++;
  const num = str.slice(pos, i) || '0';
  pos = i;
  let denom = '';
  if (str[pos] === '.') {
    pos++;
    i = pos;
    while (isDigit(str[i])) i++;
    denom = str.slice(pos, i);
    pos = i;
  }
  const suffixStart = pos;
  while (pos < end && SUFFIX_CHARS.has(str[pos])) pos++;
  if (str[pos] === '-' || str[pos] === '+') pos++;
  while (isDigit(str[pos])) pos++;
  if (pos < end) throw new QuantityError(ERR_FORMAT_WRONG);
  return { positive, num, denom, suffix: str.slice(suffixStart), hasDigits: /[0-9]/.test(str.slice(0, suffixStart)) };
}

// quantitySuffixer.interpret
function interpretSuffix(suffix: string): { base: 10 | 2; exponent: number; format: QuantityFormat } {
  if (Object.hasOwn(DECIMAL_SUFFIXES, suffix)) return { base: 10, exponent: DECIMAL_SUFFIXES[suffix], format: 'DecimalSI' };
  if (Object.hasOwn(BINARY_SUFFIXES, suffix)) return { base: 2, exponent: BINARY_SUFFIXES[suffix], format: 'BinarySI' };
  if (suffix.length > 1 && (suffix[0] === 'e' || suffix[0] === 'E') && /^[+-]?[0-9]+$/.test(suffix.slice(1))) {
    const e = BigInt(suffix.slice(1));
    // strconv.ParseInt(…, 64) then int32(): out of int64 is an error, the rest wraps.
    if (e > MAX_INT64 || e < -MAX_INT64 - 1n) throw new QuantityError(ERR_SUFFIX);
    return { base: 10, exponent: Number(BigInt.asIntN(32, e)), format: 'DecimalExponent' };
  }
  throw new QuantityError(ERR_SUFFIX);
}

const digitCount = (n: bigint) => (n < 0n ? -n : n).toString().length;
const pow10 = (n: number) => 10n ** BigInt(n);

/** Parses a quantity as resource.ParseQuantity does; throws QuantityError on invalid text. */
export function parseQuantity(str: string): Quantity {
  if (str.length === 0) throw new QuantityError(ERR_FORMAT_WRONG);
  if (str === '0') return { unscaled: 0n, exponent: 0, format: 'DecimalSI', text: str };
  const { positive, num, denom, suffix, hasDigits } = splitQuantity(str);
  const { base, exponent, format } = interpretSuffix(suffix);

  // Go's int64 fast path: when it applies, an already canonical text is kept as is.
  let precision: number;
  let scale: number;
  let mantissa = 1n;
  if (base === 10) {
    scale = exponent;
    precision = MAX_INT64_FACTORS - (num.length + denom.length);
  } else {
    scale = 0;
    if (denom.length === 0) {
      mantissa = 1n << BigInt(exponent);
      precision = 15 - num.length - Math.trunc((exponent * 3) / 10) - 1;
    } else {
      precision = -1;
    }
  }
  if (precision >= 0) {
    scale -= denom.length;
    if (scale >= NANO) {
      const shifted = num + denom;
      const value = BigInt(shifted);
      const product = value * mantissa;
      if (product <= MAX_INT64) {
        const unscaled = positive ? product : -product;
        const canonical = base === 2 ? (value & 7n) !== 0n : scale % 3 === 0 && !shifted.endsWith('000') && shifted[0] !== '0';
        return canonical ? { unscaled, exponent: scale, format, text: str } : { unscaled, exponent: scale, format };
      }
    }
  }

  // Exact decimal arithmetic: value = num.denom × base^exponent.
  if (!hasDigits) throw new QuantityError(ERR_NUMERIC);
  let magnitude = BigInt(num + denom);
  let exp10 = -denom.length;
  if (base === 10) exp10 += exponent;
  else magnitude <<= BigInt(exponent);
  let fmt = format;
  if (magnitude !== 0n && exp10 < NANO) {
    // Round up to a whole number of nano units (Go rounds non-zero requests up, never to zero).
    const drop = NANO - exp10;
    if (drop > digitCount(magnitude)) {
      magnitude = 1n;
    } else {
      const div = pow10(drop);
      magnitude = (magnitude + div - 1n) / div;
    }
    exp10 = NANO;
  }
  if (fmt === 'BinarySI' && compareMagnitude(magnitude, exp10, MAX_INT64, 0) > 0) {
    magnitude = MAX_INT64;
    exp10 = 0;
  }
  if (fmt === 'BinarySI' && magnitude !== 0n && compareMagnitude(magnitude, exp10, 1n, 0) < 0) fmt = 'DecimalSI';
  return { unscaled: positive ? magnitude : -magnitude, exponent: exp10, format: fmt, decimal: true };
}

/** parseQuantity, or undefined for text that is not a quantity. */
export function tryParseQuantity(str: string): Quantity | undefined {
  try {
    return parseQuantity(str);
  } catch (err) {
    if (err instanceof QuantityError) return undefined;
    throw err;
  }
}

/** Compares two non-negative values a×10^ea and b×10^eb without building huge powers of ten. */
function compareMagnitude(a: bigint, ea: number, b: bigint, eb: number): number {
  if (a === 0n || b === 0n) return a === b ? 0 : a === 0n ? -1 : 1;
  const ma = digitCount(a) + ea;
  const mb = digitCount(b) + eb;
  if (ma !== mb) return ma < mb ? -1 : 1;
  // Same order of magnitude: the exponents differ by less than the digits held, so align them.
  const x = ea > eb ? a * pow10(ea - eb) : a;
  const y = eb > ea ? b * pow10(eb - ea) : b;
  return x < y ? -1 : x > y ? 1 : 0;
}

const sign = (n: bigint) => (n < 0n ? -1 : n > 0n ? 1 : 0);
const abs = (n: bigint) => (n < 0n ? -n : n);

/** -1, 0 or 1 as a is less than, equal to or greater than b (Quantity.Cmp). */
export function compareQuantity(a: Quantity, b: Quantity): number {
  const sa = sign(a.unscaled);
  const sb = sign(b.unscaled);
  if (sa !== sb) return sa < sb ? -1 : 1;
  const m = compareMagnitude(abs(a.unscaled), a.exponent, abs(b.unscaled), b.exponent);
  return sa < 0 ? -m : m;
}

/** a + b (Quantity.Add), exact; the sum keeps a's format, or b's when a is zero (as Go's Add). */
export function addQuantity(a: Quantity, b: Quantity): Quantity {
  const exponent = Math.min(a.exponent, b.exponent);
  const unscaled = a.unscaled * pow10(a.exponent - exponent) + b.unscaled * pow10(b.exponent - exponent);
  return { unscaled, exponent, format: a.unscaled === 0n ? b.format : a.format };
}

/** Parses both texts and compares them; throws QuantityError when either is invalid. */
export function compareQuantityStrings(a: string, b: string): number {
  return compareQuantity(parseQuantity(a), parseQuantity(b));
}

function stripFactors(n: bigint, factor: bigint): { rest: bigint; times: number } {
  let rest = n;
  let times = 0;
  while (rest !== 0n && rest % factor === 0n) {
    rest /= factor;
    times++;
  }
  return { rest, times };
}

/** The text Go writes for a parsed quantity (Quantity.String / MarshalJSON). */
export function formatQuantity(q: Quantity): string {
  if (q.text !== undefined) return q.text;
  if (q.unscaled === 0n) return '0';
  let format = q.format;
  let integral: bigint | undefined;
  if (format === 'BinarySI') {
    if (
      compareQuantity(q, { unscaled: -1024n, exponent: 0, format }) > 0 &&
      compareQuantity(q, { unscaled: 1024n, exponent: 0, format }) < 0
    ) {
      format = 'DecimalSI';
    } else if (q.exponent >= 0) {
      integral = q.unscaled * pow10(q.exponent);
    } else {
      const div = pow10(-q.exponent);
      if (q.unscaled % div === 0n) integral = q.unscaled / div;
      else format = 'DecimalSI'; // not a whole number: shown as DecimalSI rather than rounded
    }
  }
  if (format === 'BinarySI' && integral !== undefined) {
    const { rest, times } = stripFactors(integral, 1024n);
    return rest.toString() + (BINARY_BY_EXPONENT.get(times * 10) ?? '');
  }
  const { rest, times } = stripFactors(q.unscaled, 10n);
  let mantissa = rest;
  let exponent = q.exponent + times;
  while (exponent % 3 !== 0) {
    mantissa *= 10n;
    exponent--;
  }
  const suffix = format === 'DecimalExponent' ? (exponent === 0 ? '' : `e${exponent}`) : (DECIMAL_BY_EXPONENT.get(exponent) ?? '');
  return mantissa.toString() + suffix;
}

/**
 * How Go's resource.Quantity marshals this text after parsing it ("1024Mi" → "1Gi", "0.5" →
 * "500m", "1000m" → "1", "1.5Gi" → "1536Mi"); throws QuantityError on invalid text.
 */
export function canonicalQuantity(str: string): string {
  return formatQuantity(parseQuantity(str));
}

/**
 * Quantity.RoundUp(scale): the value rounded away from zero to a multiple of 10^scale. A value
 * that already fits keeps its text; one held at a finer scale loses it (Go clears its cached
 * string), so it marshals in canonical form.
 */
export function roundUpQuantity(q: Quantity, scale: number): Quantity {
  if (q.exponent >= scale) return q;
  const div = pow10(scale - q.exponent);
  let unscaled = q.unscaled / div;
  if (q.unscaled % div !== 0n) unscaled += q.unscaled < 0n ? -1n : 1n;
  return { unscaled, exponent: scale, format: q.format };
}

/**
 * What Kubernetes' SetDefaults_ResourceList leaves of a quantity once marshalled: rounded up to
 * milli-units, in canonical form ("1024Mi" → "1Gi", "0.5" → "500m", "100n" → "1m"). Text that is
 * not a quantity is returned unchanged for validation to report.
 */
export function defaultedResourceQuantity(str: string): string {
  const q = tryParseQuantity(str);
  return q ? formatQuantity(roundUpQuantity(q, -3)) : str;
}
