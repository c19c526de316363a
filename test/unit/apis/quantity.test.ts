import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  canonicalQuantity,
  compareQuantity,
  compareQuantityStrings,
  ERR_FORMAT_WRONG,
  ERR_NUMERIC,
  ERR_SUFFIX,
  parseQuantity,
  QuantityError,
  tryParseQuantity,
  type Quantity,
} from '../../../src/apis/quantity.ts';
import { Quantity as QuantitySchema } from '../../../src/apis/primitives.ts';

/** The exact value as plain decimal text without trailing fraction zeros. */
function decimal(q: Quantity): string {
  if (q.unscaled === 0n) return '0';
  const neg = q.unscaled < 0n;
  let digits = (neg ? -q.unscaled : q.unscaled).toString();
  if (q.exponent >= 0) digits += '0'.repeat(q.exponent);
  else {
    digits = digits.padStart(-q.exponent + 1, '0');
    digits = `${digits.slice(0, digits.length + q.exponent)}.${digits.slice(digits.length + q.exponent)}`.replace(/\.?0+$/, '');
  }
  return digits === '0' ? '0' : (neg ? '-' : '') + digits;
}
const trimDecimal = (s: string) => (s.includes('.') ? s.replace(/\.?0+$/, '') : s);

// [input, json.Marshal(resource.MustParse(input)), AsDec().String()], as printed by
// k8s.io/apimachinery v0.36.3. Kept whole: Go keeps already-canonical input text ("+1", "01",
// "1.G", "1e3"), rounds up to 1n, caps binary values at 2^63-1 and has no suffix past E.
const GO: Array<[string, string, string]> = [
  ['1024Mi', '1Gi', '1073741824'],
  ['0.5', '500m', '0.5'],
  ['1000m', '1', '1.000'],
  ['1e3', '1e3', '1000'],
  ['1.5Gi', '1536Mi', '1610612736.000000000'],
  ['+1', '+1', '1'],
  ['01', '01', '1'],
  ['+100Mi', '+100Mi', '104857600'],
  ['100Mi', '100Mi', '104857600'],
  ['0', '0', '0'],
  ['00', '0', '0'],
  ['-', '0', '0'],
  ['+', '0', '0'],
  ['1.G', '1.G', '1000000000'],
  ['.5', '500m', '0.5'],
  ['5.', '5.', '5'],
  ['1E3', '1E3', '1000'],
  ['1e-3', '1e-3', '0.001'],
  ['1.5e3', '1500', '1500'],
  ['0.1n', '1n', '0.000000001'],
  ['1n', '1n', '0.000000001'],
  ['1u', '1u', '0.000001'],
  ['1k', '1k', '1000'],
  ['1000k', '1M', '1000000'],
  ['1M', '1M', '1000000'],
  ['1000000', '1M', '1000000'],
  ['123456789', '123456789', '123456789'],
  ['1Ki', '1Ki', '1024'],
  ['1023', '1023', '1023'],
  ['1024', '1024', '1024'],
  ['1025', '1025', '1025'],
  ['-1Ki', '-1Ki', '-1024'],
  ['-1.5Gi', '-1536Mi', '-1610612736.000000000'],
  ['0.5Ki', '512', '512.000000000'],
  ['1.5Ki', '1536', '1536.000000000'],
  ['8Ei', '9223372036854775807', '9223372036854775807'],
  ['7Ei', '7Ei', '8070450532247928832.000000000'],
  ['1000E', '1', '1000000000000000000000'],
  ['1e21', '1e21', '1000000000000000000000'],
  ['1e-10', '1e-9', '0.000000001'],
  ['1.0', '1', '1.0'],
  ['2.50', '2500m', '2.50'],
  ['100m', '100m', '0.100'],
  ['0.1', '100m', '0.1'],
  ['1e+3', '1e+3', '1000'],
  ['1E-3', '1E-3', '0.001'],
  ['12e3', '12e3', '12000'],
  ['12000', '12k', '12000'],
  ['-0', '0', '0'],
  ['-0.0', '0', '0.0'],
  ['0.000', '0', '0.000'],
  ['1e0', '1e0', '1'],
  ['1e01', '10', '10'],
  ['100e-2', '1', '1.00'],
  ['1.5', '1500m', '1.5'],
  ['0.001', '1m', '0.001'],
  ['1m', '1m', '0.001'],
  ['1000u', '1m', '0.001000'],
  ['1500m', '1500m', '1.500'],
  ['1.500', '1.500', '1.500'],
  ['2048Ki', '2Mi', '2097152'],
  ['3Gi', '3Gi', '3221225472'],
  ['3072Mi', '3Gi', '3221225472'],
  ['0.9Ki', '921600m', '921.600000000'],
  ['1000Ki', '1000Ki', '1024000'],
  ['9223372036854775807', '9223372036854775807', '9223372036854775807.000000000'],
  ['9223372036854775808', '9223372036854775808', '9223372036854775808.000000000'],
  ['1e18', '1e18', '1000000000000000000'],
  ['1E', '1E', '1000000000000000000'],
  ['1P', '1P', '1000000000000000'],
  ['1Pi', '1Pi', '1125899906842624.000000000'],
  ['500Mi', '500Mi', '524288000'],
  ['0.5Gi', '512Mi', '536870912.000000000'],
  ['-500m', '-500m', '-0.500'],
  ['1Ei', '1Ei', '1152921504606846976.000000000'],
  ['1.1', '1100m', '1.1'],
  ['10.0', '10', '10.0'],
  ['1.Ki', '1.Ki', '1024'],
  ['0.0000000001', '1n', '0.000000001'],
  ['-0.0000000001', '-1n', '-0.000000001'],
  ['1.0000000001', '1000000001n', '1.000000001'],
  ['123456789012345678', '123456789012345678', '123456789012345678'],
  ['1234567890123456789', '1234567890123456789', '1234567890123456789.000000000'],
  ['12345678901234567890', '12345678901234567890', '12345678901234567890.000000000'],
  ['99999999999999999999Ki', '9223372036854775807', '9223372036854775807'],
  ['0.0001Ki', '102400u', '0.102400000'],
  ['1.0001Ki', '1024102400u', '1024.102400000'],
  ['1023.5', '1023500m', '1023.5'],
  ['1024.5', '1024500m', '1024.5'],
  ['-1023.9Ki', '-1048473600m', '-1048473.600000000'],
  ['1e-9', '1e-9', '0.000000001'],
  ['1e-12', '1e-9', '0.000000001'],
  ['5e-10', '1e-9', '0.000000001'],
  ['1000000000000000000000', '1', '1000000000000000000000.000000000'],
  ['0.000000000000000000001', '1n', '0.000000001'],
  ['3e2', '300', '300'],
  ['30e1', '300', '300'],
  ['4e-1', '400e-3', '0.4'],
  ['4e-2', '40e-3', '0.04'],
  ['4e-4', '400e-6', '0.0004'],
  ['-4e-4', '-400e-6', '-0.0004'],
  ['1.000000000000000000', '1', '1.000000000'],
  ['100000000000000000', '100P', '100000000000000000'],
  ['1000000000000000000', '1E', '1000000000000000000.000000000'],
  ['10000000000000000000', '10E', '10000000000000000000.000000000'],
  ['1e19', '10e18', '10000000000000000000'],
  ['1.5e-3', '1500e-6', '0.0015'],
  ['1.5E+3', '1500', '1500'],
  ['16Ei', '9223372036854775807', '9223372036854775807'],
  ['0.5Ei', '512Pi', '576460752303423488.000000000'],
  ['1024Ki', '1Mi', '1048576'],
  ['1048576', '1048576', '1048576'],
  ['1048576Ki', '1Gi', '1073741824'],
  ['-1048576Ki', '-1Gi', '-1073741824'],
  ['2Ti', '2Ti', '2199023255552'],
  ['2048Gi', '2Ti', '2199023255552'],
  ['0.000001Ki', '1024u', '0.001024000'],
  ['1.5n', '2n', '0.000000002'],
  ['1.5u', '1500n', '0.0000015'],
  ['999n', '999n', '0.000000999'],
  ['1000n', '1u', '0.000001000'],
  ['1000000n', '1m', '0.001000000'],
  ['1000000u', '1', '1.000000'],
  ['1000000000m', '1M', '1000000.000'],
  ['6n', '6n', '0.000000006'],
  ['.131e3', '131', '131'],
  ['-1u', '-1u', '-0.000001'],
  ['90996.0e3', '90996e3', '90996000'],
  ['62e-3', '62e-3', '0.062'],
  ['2199Ki', '2199Ki', '2251776'],
  ['5.Ei', '5Ei', '5764607523034234880.000000000'],
  ['.5Ei', '512Pi', '576460752303423488.000000000'],
  ['-.5Ei', '-512Pi', '-576460752303423488.000000000'],
  ['+5.Ei', '5Ei', '5764607523034234880.000000000'],
  ['000.Ei', '0', '0'],
  ['0.Ei', '0', '0'],
  ['1234567890123456789.', '1234567890123456789', '1234567890123456789.000000000'],
  ['1234567890123456789.0', '1234567890123456789', '1234567890123456789.000000000'],
  ['.', '0', '0'],
  ['-.', '0', '0'],
  ['+.', '0', '0'],
  ['.Ki', '0', '0'],
  ['.n', '0', '0.000000000'],
  ['0.Pi', '0', '0'],
  ['00.5Pi', '512Ti', '562949953421312.000000000'],
  ['1234567890123456789', '1234567890123456789', '1234567890123456789.000000000'],
  ['-1234567890123456789.', '-1234567890123456789', '-1234567890123456789.000000000'],
  ['.e3', '0', '0'],
  ['.1234567890123456789', '123456790n', '0.123456790'],
  ['5.e-12', '1e-9', '0.000000001'],
];

describe('Quantity (resource.Quantity)', () => {
  test('canonical form and exact value match Go for every table entry', () => {
    for (const [input, marshalled, value] of GO) {
      assert.equal(canonicalQuantity(input), marshalled, `canonical form of ${JSON.stringify(input)}`);
      assert.equal(decimal(parseQuantity(input)), trimDecimal(value), `value of ${JSON.stringify(input)}`);
    }
  });

  test('the examples the issue names', () => {
    const cases: Array<[string, string]> = [
      ['1024Mi', '1Gi'],
      ['0.5', '500m'],
      ['1000m', '1'],
      ['1.5Gi', '1536Mi'],
      // Go keeps "1e3" (already canonical DecimalExponent text), it does not write "1k".
      ['1e3', '1e3'],
      ['1000', '1k'],
      ['1.5e3', '1500'],
    ];
    for (const [input, want] of cases) assert.equal(canonicalQuantity(input), want, input);
  });

  test("invalid text gives Go's error", () => {
    const cases: Array<[string, string]> = [
      ['', ERR_FORMAT_WRONG],
      ['abc', ERR_FORMAT_WRONG],
      ['1.2.3', ERR_FORMAT_WRONG],
      ['1e3.5', ERR_FORMAT_WRONG],
      ['0x10', ERR_FORMAT_WRONG],
      ['1_000', ERR_FORMAT_WRONG],
      [' 1', ERR_FORMAT_WRONG],
      ['1 ', ERR_FORMAT_WRONG],
      ['1e', ERR_SUFFIX],
      ['1i', ERR_SUFFIX],
      ['1K', ERR_SUFFIX],
      ['1mi', ERR_SUFFIX],
      ['1Ki2', ERR_SUFFIX],
      ['1ee3', ERR_SUFFIX],
      ['1e+', ERR_SUFFIX],
      ['+-1', ERR_SUFFIX],
      ['1e9223372036854775808', ERR_SUFFIX],
      ['+.Ei', ERR_NUMERIC],
      ['.e-12', ERR_NUMERIC],
    ];
    for (const [input, message] of cases) {
      assert.throws(
        () => parseQuantity(input),
        (e: unknown) => e instanceof QuantityError && e.message === message,
        JSON.stringify(input),
      );
      assert.equal(tryParseQuantity(input), undefined);
    }
  });

  test('compare is exact, across suffixes and formats', () => {
    const cases: Array<[string, string, number]> = [
      ['1Gi', '1024Mi', 0],
      ['1Gi', '1073741824', 0],
      ['1G', '1Gi', -1],
      ['500m', '0.5', 0],
      ['1e3', '1k', 0],
      ['0.1', '100m', 0],
      ['1n', '0.1n', 0], // both round up to 1n
      ['1n', '2n', -1],
      ['-1', '1', -1],
      ['-2Gi', '-1Gi', -1],
      ['0', '-0', 0],
      ['0', '1n', -1],
      ['1E', '1e18', 0],
      ['1e100', '1e99', 1],
      ['9223372036854775807', '9223372036854775806', 1], // beyond float precision
      ['100000000000000000001', '100000000000000000000', 1],
      ['8Ei', '9223372036854775807', 0], // capped
      ['1.5Gi', '1536Mi', 0],
      ['1536Mi', '1.6G', 1],
    ];
    for (const [a, b, want] of cases) {
      assert.equal(compareQuantityStrings(a, b), want, `${a} vs ${b}`);
      assert.equal(compareQuantity(parseQuantity(b), parseQuantity(a)), want === 0 ? 0 : -want, `${b} vs ${a}`);
    }
  });

  test('huge exponents stay cheap (no power of ten is built for them)', () => {
    assert.equal(compareQuantityStrings('1e2000000000', '1e1999999999'), 1);
    assert.equal(canonicalQuantity('1e-2000000000'), '1e-9'); // rounded up to 1n, still DecimalExponent
    assert.equal(canonicalQuantity('1e2000000000'), '100e1999999998'); // exponent made a multiple of 3, as Go
  });

  test('text the CRD schema pattern accepts parses', () => {
    const pattern = new RegExp(QuantitySchema().pattern as string);
    for (const [input] of GO) if (pattern.test(input)) assert.ok(tryParseQuantity(input), input);
  });
});
