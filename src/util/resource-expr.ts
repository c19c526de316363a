// The expression language of SidecarSet `resourcesPolicy.resourcesExpr` (upstream master
// pkg/util/calculator): `+ - * /`, parentheses, unary minus, `max(a, b)` / `min(a, b)`, numbers
// (`42`, `3.5`, `1e3`, `50%` = 0.5), quantities (`50m`, `100Mi`) and the variables the caller binds
// (`cpu`, `memory`). Upstream's rules are kept on purpose, because a sidecar's resources must come
// out the same under Kruise TS as under OpenKruise:
//  * a number meets a quantity as milli-units truncated to an integer (`int64(n*1000)`);
//  * quantity × number and quantity ÷ number work on the quantity's milli value (rounded up) in
//    float64 and truncate back to whole milli-units, keeping the quantity's format;
//  * quantity × quantity and anything ÷ quantity are errors, as is ÷ 0 and a negative result;
//  * the last error raised while evaluating wins over a later syntax error, as in the LALR parser
//    whose reductions run before it meets the bad token;
//  * the input is read byte by byte (UTF-8 bytes taken as Latin-1 code points), as upstream's lexer.
import {
  addQuantity,
  compareQuantity,
  formatQuantity,
  parseQuantity,
  QuantityError,
  type Quantity,
  type QuantityFormat,
} from '../apis/quantity.ts';

export type ExprValue = { kind: 'number'; n: number } | { kind: 'quantity'; q: Quantity };

export class ExprError extends Error {
  override name = 'ExprError';
}

const INT64_MIN = -(2n ** 63n);
const TWO_63 = 2 ** 63;

/** Go's int64(x) of a float64 on amd64: truncation; NaN and out-of-range give the minimum int64. */
export function goInt64(x: number): bigint {
  if (!Number.isFinite(x) || x >= TWO_63 || x < -TWO_63) return INT64_MIN;
  return BigInt(Math.trunc(x));
}

/** resource.NewMilliQuantity(v, format). */
export const milliQuantity = (milli: bigint, format: QuantityFormat = 'DecimalSI'): Quantity => ({ unscaled: milli, exponent: -3, format });

/** Quantity.MilliValue: ceil(q × 1000). */
function milliValue(q: Quantity): bigint {
  const shift = q.exponent + 3;
  if (shift >= 0) return q.unscaled * 10n ** BigInt(shift);
  const div = 10n ** BigInt(-shift);
  const quotient = q.unscaled / div;
  return q.unscaled % div > 0n ? quotient + 1n : quotient;
}

const neg = (q: Quantity): Quantity => ({ unscaled: -q.unscaled, exponent: q.exponent, format: q.format });
const toQuantity = (v: ExprValue): Quantity => (v.kind === 'quantity' ? v.q : milliQuantity(goInt64(v.n * 1000)));
const quantity = (q: Quantity): ExprValue => ({ kind: 'quantity', q });
const num = (n: number): ExprValue => ({ kind: 'number', n });
/** Quantity.SetMilli on a copy: the format stays. */
const scaled = (q: Quantity, factor: (milli: number) => number): Quantity =>
  milliQuantity(goInt64(factor(Number(milliValue(q)))), q.format);

/** Go's %g of a float64 (shortest digits; exponent form below 1e-4 and from 1e6). */
export function formatFloat(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (!Number.isFinite(n)) return n > 0 ? '+Inf' : '-Inf';
  if (n === 0) return Object.is(n, -0) ? '-0' : '0';
  const [mantissa, e] = n.toExponential().split('e') as [string, string];
  const exp = Number(e);
  if (exp < -4 || exp >= 6) return `${mantissa}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  return String(n);
}

export const formatValue = (v: ExprValue): string => (v.kind === 'quantity' ? formatQuantity(v.q) : formatFloat(v.n));

// ---------------------------------------------------------------------------------------------
// Lexer

type TokenType = 'NUMBER' | 'QUANTITY' | 'IDENT' | 'EOF' | 'CHAR';
interface Token {
  type: TokenType;
  text: string;
  /** Offset just past the token (and the whitespace before it), for error positions. */
  end: number;
}

const isDigit = (c: string) => c >= '0' && c <= '9';
const isLetter = (c: string) => /\p{L}/u.test(c);
// unicode.IsSpace over Latin-1.
const isSpace = (c: string) => c === ' ' || (c >= '\t' && c <= '\r') || c === '\x85' || c === '\xa0';
const QUANTITY_UNITS = new Set(['m', 'k', 'M', 'G', 'T', 'P', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi']);
const NUMERIC_CHARS = /[0-9.eE+-]/;

class Lexer {
  private pos = 0;
  constructor(private readonly input: string) {}

  /** The character at pos, or '' at the end (and, as upstream, at a NUL byte). */
  private peek(): string {
    const c = this.input[this.pos] ?? '';
    return c === '\0' ? '' : c;
  }

  next(): Token {
    while (this.peek() && isSpace(this.peek())) this.pos++;
    const c = this.peek();
    if (!c) return { type: 'EOF', text: '', end: this.pos };
    if (c === '.' || isDigit(c)) {
      const text = this.readNumber();
      return { type: isQuantityText(text) ? 'QUANTITY' : 'NUMBER', text, end: this.pos };
    }
    if (isLetter(c)) {
      const start = this.pos;
      while (this.peek() && (isLetter(this.peek()) || isDigit(this.peek()) || this.peek() === '_')) this.pos++;
      return { type: 'IDENT', text: this.input.slice(start, this.pos), end: this.pos };
    }
    this.pos++;
    return { type: 'CHAR', text: c, end: this.pos };
  }

  /** Digits, one dot, one exponent (with its sign), one percent sign, then a run of letters (the unit). */
  private readNumber(): string {
    const start = this.pos;
    let seenDot = false;
    let seenE = false;
    let seenPercent = false;
    let expectExponentDigit = false;
    for (;;) {
      const c = this.peek();
      if (!c) break;
      if (isDigit(c)) {
        expectExponentDigit = false;
      } else if (c === '.') {
        if (seenDot || seenE || seenPercent) break;
        seenDot = true;
      } else if (c === 'e' || c === 'E') {
        if (seenE || seenPercent) break;
        seenE = true;
        expectExponentDigit = true;
      } else if (c === '+' || c === '-') {
        if (!expectExponentDigit) break;
        expectExponentDigit = false;
      } else if (c === '%') {
        if (seenPercent) break;
        seenPercent = true;
      } else if (isLetter(c) && !expectExponentDigit) {
        while (this.peek() && isLetter(this.peek())) this.pos++;
        break;
      } else {
        break;
      }
      this.pos++;
    }
    return this.input.slice(start, this.pos);
  }

  /** "line L, col C" of an offset, as upstream's lexer counts them. */
  position(offset: number): string {
    const before = this.input.slice(0, offset);
    const lines = before.split('\n');
    return `line ${lines.length}, col ${lines.at(-1)!.length + 1}`;
  }
}

/** A number followed by one of the Kubernetes units upstream allows. */
function isQuantityText(s: string): boolean {
  let numEnd = 0;
  for (let i = 0; i < s.length; i++) {
    if (!NUMERIC_CHARS.test(s[i]!)) {
      numEnd = i;
      break;
    }
  }
  return numEnd > 0 && QUANTITY_UNITS.has(s.slice(numEnd));
}

const FLOAT_SYNTAX = /^(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** parseNumber with its error ignored, as upstream's grammar does: bad text reads as 0. */
function numberOf(text: string): number {
  if (text.endsWith('%')) {
    const body = text.slice(0, -1);
    const n = FLOAT_SYNTAX.test(body) ? Number(body) : NaN;
    return Number.isFinite(n) ? n / 100 : 0;
  }
  return FLOAT_SYNTAX.test(text) ? Number(text) : 0;
}

// ---------------------------------------------------------------------------------------------
// Parser and evaluator: expr := term (('+'|'-') term)*; term := factor (('*'|'/') factor)*;
// factor := NUMBER | QUANTITY | IDENT | IDENT '(' expr [',' expr] ')' | '(' expr ')' | '-' factor.
// A failed operation yields undefined (upstream's nil), which every later operation passes on.

type Maybe = ExprValue | undefined;

class Evaluator {
  private readonly lexer: Lexer;
  private token: Token;
  private lastError: string | undefined;

  constructor(
    input: string,
    private readonly variables: ReadonlyMap<string, ExprValue>,
  ) {
    this.lexer = new Lexer(Buffer.from(input, 'utf8').toString('latin1'));
    this.token = this.lexer.next();
  }

  run(): ExprValue {
    const result = this.expr();
    if (this.token.type !== 'EOF') this.syntaxError();
    if (result === undefined) throw new ExprError(this.lastError ?? 'no result from parser');
    const negative = result.kind === 'quantity' ? result.q.unscaled < 0n : result.n < 0;
    if (negative) throw new ExprError(`calculation result is negative: ${formatValue(result)}`);
    return result;
  }

  private syntaxError(): never {
    throw new ExprError(this.lastError ?? `parse error: syntax error at ${this.lexer.position(this.token.end)}`);
  }

  private isChar(c: string): boolean {
    return this.token.type === 'CHAR' && this.token.text === c;
  }

  private expect(c: string): void {
    if (!this.isChar(c)) this.syntaxError();
    this.token = this.lexer.next();
  }

  private fail(message: string): undefined {
    this.lastError = message;
    return undefined;
  }

  private expr(): Maybe {
    let left = this.term();
    while (this.isChar('+') || this.isChar('-')) {
      const op = this.token.text;
      this.token = this.lexer.next();
      const right = this.term();
      left = this.additive(left, right, op === '-');
      if (left === undefined && this.lastError === undefined)
        this.lastError = `invalid ${op === '-' ? 'subtraction' : 'addition'} operation`;
    }
    return left;
  }

  private term(): Maybe {
    let left = this.factor();
    while (this.isChar('*') || this.isChar('/')) {
      const op = this.token.text;
      this.token = this.lexer.next();
      const right = this.factor();
      left = op === '*' ? this.mul(left, right) : this.div(left, right);
      if (left === undefined && this.lastError === undefined) {
        this.lastError = `invalid ${op === '*' ? 'multiplication' : 'division'} operation`;
      }
    }
    return left;
  }

  private factor(): Maybe {
    const t = this.token;
    switch (t.type) {
      case 'NUMBER':
        this.token = this.lexer.next();
        return num(numberOf(t.text));
      case 'QUANTITY':
        this.token = this.lexer.next();
        try {
          return quantity(parseQuantity(t.text));
        } catch (err) {
          if (err instanceof QuantityError) return this.fail(err.message);
          throw err;
        }
      case 'IDENT': {
        this.token = this.lexer.next();
        const name = Buffer.from(t.text, 'latin1').toString('utf8');
        if (this.isChar('(')) return this.call(name);
        const value = this.variables.get(name.toLowerCase());
        return value ?? this.fail(`undefined variable: ${name.toLowerCase()}`);
      }
      case 'CHAR':
        if (t.text === '(') {
          this.token = this.lexer.next();
          const inner = this.expr();
          this.expect(')');
          return inner;
        }
        if (t.text === '-') {
          this.token = this.lexer.next();
          const v = this.factor();
          if (v === undefined) return undefined;
          return v.kind === 'quantity' ? quantity(neg(v.q)) : num(-v.n);
        }
    }
    return this.syntaxError();
  }

  private call(name: string): Maybe {
    this.expect('(');
    const args = [this.expr()];
    if (this.isChar(',')) {
      this.token = this.lexer.next();
      args.push(this.expr());
    }
    this.expect(')');
    const fn = name.toLowerCase();
    let result: Maybe;
    if (fn !== 'max' && fn !== 'min') result = this.fail(`unknown function: ${name}`);
    else if (args.length !== 2) result = this.fail(`${fn} function requires exactly 2 arguments, got ${args.length}`);
    else result = this.extreme(args[0], args[1], fn === 'max');
    if (result === undefined && this.lastError === undefined) this.lastError = 'function call failed';
    return result;
  }

  /** max / min: the left one on a tie; a number against a quantity is compared (and returned) as milli-units. */
  private extreme(left: Maybe, right: Maybe, max: boolean): Maybe {
    if (left === undefined || right === undefined) return undefined;
    if (left.kind === 'number' && right.kind === 'number') {
      const keepLeft = max ? left.n >= right.n : left.n <= right.n;
      return keepLeft ? left : right;
    }
    const l = toQuantity(left);
    const r = toQuantity(right);
    const cmp = compareQuantity(l, r);
    return quantity((max ? cmp >= 0 : cmp <= 0) ? l : r);
  }

  private additive(left: Maybe, right: Maybe, subtract: boolean): Maybe {
    if (left === undefined || right === undefined) return undefined;
    if (left.kind === 'number' && right.kind === 'number') return num(subtract ? left.n - right.n : left.n + right.n);
    const r = toQuantity(right);
    return quantity(addQuantity(toQuantity(left), subtract ? neg(r) : r));
  }

  private mul(left: Maybe, right: Maybe): Maybe {
    if (left === undefined || right === undefined) return undefined;
    if (left.kind === 'quantity' && right.kind === 'quantity') return this.fail('multiplication of two quantities');
    if (left.kind === 'quantity' && right.kind === 'number') return quantity(scaled(left.q, (m) => m * right.n));
    if (right.kind === 'quantity' && left.kind === 'number') return quantity(scaled(right.q, (m) => m * left.n));
    return num((left as { n: number }).n * (right as { n: number }).n);
  }

  private div(left: Maybe, right: Maybe): Maybe {
    if (left === undefined || right === undefined) return undefined;
    if (right.kind === 'quantity') return this.fail('division by quantity');
    if (right.n === 0) return this.fail('division by zero');
    if (left.kind === 'quantity') return quantity(scaled(left.q, (m) => m / right.n));
    return num(left.n / right.n);
  }
}

/** Evaluates an expression with the given variables (names lower-case); throws ExprError with upstream's message. */
export function evaluateExpr(expr: string, variables: ReadonlyMap<string, ExprValue> = new Map()): ExprValue {
  return new Evaluator(expr, variables).run();
}
