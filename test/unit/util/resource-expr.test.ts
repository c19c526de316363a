// The resourcesPolicy expression language as upstream master's pkg/util/calculator evaluates it
// (cases after its calculator_test.go, plus the quirks Kruise TS keeps on purpose).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseQuantity } from '../../../src/apis/quantity.ts';
import { evaluateExpr, formatFloat, formatValue, type ExprValue } from '../../../src/util/resource-expr.ts';

const run = (expr: string, vars: Record<string, string> = {}) => {
  const variables = new Map<string, ExprValue>(Object.entries(vars).map(([k, v]) => [k, { kind: 'quantity', q: parseQuantity(v) }]));
  return formatValue(evaluateExpr(expr, variables));
};

describe('resource expressions', () => {
  const values: Array<[string, string, Record<string, string>?]> = [
    // numbers
    ['42', '42'],
    ['3.14', '3.14'],
    ['50%', '0.5'],
    ['100.5%', '1.005'],
    ['2 + 3', '5'],
    ['10 - 4', '6'],
    ['3 * 4', '12'],
    ['15 / 3', '5'],
    ['(2 + 3) * 4', '20'],
    ['2 + 3 * 4', '14'],
    ['10 - 4 - 3', '3'],
    ['100% * 2', '2'],
    ['1e2', '100'],
    ['1E2', '100'],
    ['max(10, 20)', '20'],
    ['MIN(10, 20)', '10'],
    ['min(max(max(max(0.5,0.5*0.5),0.5-1.0),0.5-1.0),3.0)', '0.5'],
    ['1000000', '1e+06'],
    ['0.0001', '0.0001'],
    ['-2 * -3', '6'],
    // text a number token cannot hold reads as 0 (upstream ignores parseNumber's error)
    ['50%5 + 1', '1'],
    // quantities
    ['40m + 20m', '60m'],
    ['100Mi - 50Mi', '50Mi'],
    ['2 * 40m', '80m'],
    ['100m / 2', '50m'],
    ['100m', '100m'],
    ['1.5Gi', '1536Mi'],
    // a number meets a quantity as whole milli-units
    ['max(40m, 20)', '20'],
    ['min(40m, 20m)', '20m'],
    ['min(max(max(max(500m,0.5*0.5),0.5-1.0),0.5-1.0),3.0)', '500m'],
    ['1 + 1m', '1001m'],
    ['0.0005 + 1m', '1m'],
    // quantity × number works on milli-units in float64, truncated, and keeps the format
    ['cpu * 50%', '100m', { cpu: '200m' }],
    ['max(cpu*50%, 50m)', '50m', { cpu: '50m' }],
    ['memory * 50%', '256Mi', { memory: '512Mi' }],
    ['memory / 3', '349525333m', { memory: '1Mi' }],
    ['cpu / 3', '333m', { cpu: '1' }],
    ['max(memory*50%, 100Mi)', '300Mi', { memory: '600Mi' }],
    ['CPU * 2', '200m', { cpu: '100m' }],
    ['-cpu * -2', '200m', { cpu: '100m' }],
  ];
  for (const [expr, want, vars] of values) test(`${expr} = ${want}`, () => assert.equal(run(expr, vars), want));

  const errors: Array<[string, string, Record<string, string>?]> = [
    ['10 / 0', 'division by zero'],
    ['1m / 0', 'division by zero'],
    ['40m * 2m', 'multiplication of two quantities'],
    ['2 / 40m', 'division by quantity'],
    ['unknown(1, 2)', 'unknown function: unknown'],
    ['max(1)', 'max function requires exactly 2 arguments, got 1'],
    ['cpu * 2', 'undefined variable: cpu'],
    // the last error raised wins
    ['foo + bar', 'undefined variable: bar'],
    ['0.5 - 1', 'calculation result is negative: -0.5'],
    ['cpu - 1', 'calculation result is negative: -850m', { cpu: '150m' }],
    ['-1e-5', 'calculation result is negative: -1e-05'],
    ['5..5', 'parse error: syntax error at line 1, col 5'],
    ['5%%', 'parse error: syntax error at line 1, col 4'],
    ['1 +', 'parse error: syntax error at line 1, col 4'],
    ['(1', 'parse error: syntax error at line 1, col 3'],
    ['max(1,2,3)', 'parse error: syntax error at line 1, col 9'],
    ['1 +\n 2 2', 'parse error: syntax error at line 2, col 5'],
    // an exponent is read before a unit: 1E then the letter i
    ['1Ei', 'parse error: syntax error at line 1, col 4'],
    // an evaluation error before the bad token is what is reported
    ['10 / 0 )', 'division by zero'],
    ['1e3m', "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"],
  ];
  for (const [expr, message, vars] of errors) {
    test(`${JSON.stringify(expr)} fails: ${message}`, () => assert.throws(() => run(expr, vars), { name: 'ExprError', message }));
  }

  test("Go's %g", () => {
    assert.deepEqual([0.5, 123456, 1234567, 0.0001, 0.00001, -2.5, 1e21].map(formatFloat), [
      '0.5',
      '123456',
      '1.234567e+06',
      '0.0001',
      '1e-05',
      '-2.5',
      '1e+21',
    ]);
  });
});
