// Label selectors with apimachinery semantics: the metav1.LabelSelector API type, the string grammar
// used in list queries and `status.labelSelector`, and the label key/value validation rules.
// Error texts follow Kubernetes's wording so webhook denials and CLI errors read the same.

import { type FieldError, fieldErrorString, aggregateMessage } from '../apis/field-errors.ts';

export { type FieldError, fieldErrorString } from '../apis/field-errors.ts';

/** Operators of a parsed requirement, spelled as in apimachinery's `selection` package. */
export type Operator = 'in' | 'notin' | '=' | '==' | '!=' | 'exists' | '!' | 'gt' | 'lt';

export interface Requirement {
  readonly key: string;
  readonly operator: Operator;
  readonly values: readonly string[];
}

/**
 * metav1.LabelSelectorRequirement as accepted here: the API type from src/apis, client-node's
 * V1LabelSelectorRequirement or raw JSON. `operator` is one of In, NotIn, Exists, DoesNotExist.
 */
export interface LabelSelectorRequirementLike {
  key: string;
  operator: string;
  values?: string[] | null;
}

/** metav1.LabelSelector in any of the shapes above. */
export interface LabelSelectorLike {
  matchLabels?: Record<string, string> | null;
  matchExpressions?: LabelSelectorRequirementLike[] | null;
}

export type Labels = Readonly<Record<string, string>> | null | undefined;

export class SelectorError extends Error {
  override name = 'SelectorError';
}

// ---------------------------------------------------------------------------------------------
// Validation of label keys and values (apimachinery api/validate/content)

const LABEL_KEY_FMT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const LABEL_KEY_RE = new RegExp(`^${LABEL_KEY_FMT}$`);
const LABEL_KEY_ERR = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_FMT = `(${LABEL_KEY_FMT})?`;
const LABEL_VALUE_RE = new RegExp(`^${LABEL_VALUE_FMT}$`);
const LABEL_VALUE_ERR =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const DNS1123_LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const DNS1123_SUBDOMAIN_RE = new RegExp(`^${DNS1123_SUBDOMAIN_FMT}$`);
const DNS1123_SUBDOMAIN_ERR =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";

const byteLength = (s: string) => Buffer.byteLength(s, 'utf8');
const maxLenError = (n: number) => `must be no more than ${n} bytes`;

/** validation.RegexError: Kubernetes's wording, including its doubled space before each "or". */
export function regexError(msg: string, re: string, ...examples: string[]): string {
  return `${msg} (e.g. ${examples.map((e) => `'${e}', `).join(' or ')}regex used for validation is '${re}')`;
}

const DNS1123_LABEL_RE = new RegExp(`^${DNS1123_LABEL_FMT}$`);
const DNS1123_LABEL_ERR =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";

/** Problems with a DNS-1123 label (lowercase, ≤ 63 bytes); empty when valid. */
export function isDNS1123Label(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > 63) errs.push(maxLenError(63));
  if (!DNS1123_LABEL_RE.test(value)) errs.push(regexError(DNS1123_LABEL_ERR, DNS1123_LABEL_FMT, 'my-name', '123-abc'));
  return errs;
}

/** Problems with a DNS-1123 subdomain (lowercase, ≤ 253 bytes); empty when valid. */
export function isDNS1123Subdomain(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > 253) errs.push(maxLenError(253));
  if (!DNS1123_SUBDOMAIN_RE.test(value)) {
    errs.push(regexError(DNS1123_SUBDOMAIN_ERR, DNS1123_SUBDOMAIN_FMT, 'example.com'));
  }
  return errs;
}

/**
 * Problems with a label key, i.e. a Kubernetes "qualified name": `[prefix/]name`, name ≤ 63 bytes,
 * prefix a DNS subdomain. Empty when valid.
 */
export function isLabelKey(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split('/');
  let name: string;
  if (parts.length === 1) {
    name = parts[0];
  } else if (parts.length === 2) {
    const prefix = parts[0];
    name = parts[1];
    if (prefix.length === 0) errs.push('prefix part must be non-empty');
    else errs.push(...isDNS1123Subdomain(prefix).map((m) => `prefix part ${m}`));
  } else {
    return [
      `a valid label key ${regexError(LABEL_KEY_ERR, LABEL_KEY_FMT, 'MyName', 'my.name', '123-abc')}` +
        " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ];
  }
  if (name.length === 0) errs.push('name part must be non-empty');
  else if (byteLength(name) > 63) errs.push(`name part ${maxLenError(63)}`);
  if (!LABEL_KEY_RE.test(name)) {
    errs.push(`name part ${regexError(LABEL_KEY_ERR, LABEL_KEY_FMT, 'MyName', 'my.name', '123-abc')}`);
  }
  return errs;
}

/** Kubernetes calls label keys "qualified names" in most validation messages. */
export const isQualifiedName = isLabelKey;

/** Problems with a label value (empty, or ≤ 63 bytes of [-A-Za-z0-9_.] with alphanumeric ends). */
export function isLabelValue(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > 63) errs.push(maxLenError(63));
  if (!LABEL_VALUE_RE.test(value)) {
    errs.push(regexError(LABEL_VALUE_ERR, LABEL_VALUE_FMT, 'MyValue', 'my_value', '12345'));
  }
  return errs;
}

/** metav1validation.ValidateLabels: every key a qualified name, every value a label value. */
export function validateLabels(labels: Labels, fieldPath: string): FieldError[] {
  const errs: FieldError[] = [];
  // Go ranges over the map in random order; sorted keys make the report deterministic.
  for (const key of Object.keys(labels ?? {}).sort()) {
    for (const detail of isLabelKey(key)) errs.push({ type: 'FieldValueInvalid', field: fieldPath, badValue: key, detail });
    for (const detail of isLabelValue(labels![key])) {
      errs.push({ type: 'FieldValueInvalid', field: fieldPath, badValue: labels![key], detail });
    }
  }
  return errs;
}

/** metav1validation.ValidateLabelSelector with default options (unknown operators rejected). */
export function validateLabelSelector(ls: LabelSelectorLike | null | undefined, fieldPath: string): FieldError[] {
  if (!ls) return [];
  const errs = validateLabels(ls.matchLabels, `${fieldPath}.matchLabels`);
  (ls.matchExpressions ?? []).forEach((expr, i) => {
    const path = `${fieldPath}.matchExpressions[${i}]`;
    const values = expr.values ?? [];
    switch (expr.operator) {
      case 'In':
      case 'NotIn':
        if (values.length === 0) {
          errs.push({
            type: 'FieldValueRequired',
            field: `${path}.values`,
            detail: "must be specified when `operator` is 'In' or 'NotIn'",
          });
        }
        break;
      case 'Exists':
      case 'DoesNotExist':
        if (values.length > 0) {
          errs.push({
            type: 'FieldValueForbidden',
            field: `${path}.values`,
            detail: "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
          });
        }
        break;
      default:
        errs.push({
          type: 'FieldValueInvalid',
          field: `${path}.operator`,
          badValue: expr.operator ?? '',
          detail: 'not a valid selector operator',
        });
    }
    // A key left out decodes as Go's zero value.
    const key = expr.key ?? '';
    for (const detail of isLabelKey(key)) {
      errs.push({ type: 'FieldValueInvalid', field: `${path}.key`, badValue: key, detail });
    }
    values.forEach((v, j) => {
      for (const detail of isLabelValue(v)) {
        errs.push({ type: 'FieldValueInvalid', field: `${path}.values[${j}]`, badValue: v, detail });
      }
    });
  });
  return errs;
}

// ---------------------------------------------------------------------------------------------
// Requirements

const BINARY_OPERATORS: readonly Operator[] = ['in', 'notin', '=', '==', '!=', 'gt', 'lt'];
const INT64_RE = /^[+-]?\d+$/;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

function parseInt64(s: string): bigint | undefined {
  if (!INT64_RE.test(s)) return undefined;
  const v = BigInt(s);
  return v < INT64_MIN || v > INT64_MAX ? undefined : v;
}

/**
 * labels.NewRequirement: validates key, operator/value-count and values, and throws a
 * SelectorError carrying Kubernetes's aggregated message when anything is wrong.
 */
export function newRequirement(key: string, operator: Operator, values: readonly string[]): Requirement {
  const errs: FieldError[] = [];
  const keyErrs = isLabelKey(key);
  if (keyErrs.length) errs.push({ type: 'FieldValueInvalid', field: 'key', badValue: key, detail: keyErrs.join('; ') });
  // Upstream builds these paths on a nil root, hence no prefix ("key", "values[0][k]").
  const valuesPath = 'values';
  switch (operator) {
    case 'in':
    case 'notin':
      if (values.length === 0) {
        // Go prints the nil slice it gets here as null.
        errs.push({
          type: 'FieldValueInvalid',
          field: valuesPath,
          badValue: null,
          detail: "for 'in', 'notin' operators, values set can't be empty",
        });
      }
      break;
    case '=':
    case '==':
    case '!=':
      if (values.length !== 1) {
        errs.push({
          type: 'FieldValueInvalid',
          field: valuesPath,
          badValue: values,
          detail: 'exact-match compatibility requires one single value',
        });
      }
      break;
    case 'exists':
    case '!':
      if (values.length !== 0) {
        errs.push({
          type: 'FieldValueInvalid',
          field: valuesPath,
          badValue: values,
          detail: 'values set must be empty for exists and does not exist',
        });
      }
      break;
    case 'gt':
    case 'lt':
      if (values.length !== 1) {
        errs.push({
          type: 'FieldValueInvalid',
          field: valuesPath,
          badValue: values,
          detail: "for 'Gt', 'Lt' operators, exactly one value is required",
        });
      }
      values.forEach((v, i) => {
        if (parseInt64(v) === undefined) {
          errs.push({
            type: 'FieldValueInvalid',
            field: `${valuesPath}[${i}]`,
            badValue: v,
            detail: "for 'Gt', 'Lt' operators, the value must be an integer",
          });
        }
      });
      break;
  }
  values.forEach((v, i) => {
    const valueErrs = isLabelValue(v);
    if (valueErrs.length) {
      errs.push({ type: 'FieldValueInvalid', field: `${valuesPath}[${i}][${key}]`, badValue: v, detail: valueErrs.join('; ') });
    }
  });
  if (errs.length) throw new SelectorError(aggregateMessage(errs.map(fieldErrorString)));
  return { key, operator, values: [...values] };
}

function lookup(labels: Labels, key: string): string | undefined {
  return labels && Object.hasOwn(labels, key) ? labels[key] : undefined;
}

export function requirementMatches(r: Requirement, labels: Labels): boolean {
  const value = lookup(labels, r.key);
  switch (r.operator) {
    case 'in':
    case '=':
    case '==':
      return value !== undefined && r.values.includes(value);
    case 'notin':
    case '!=':
      return value === undefined || !r.values.includes(value);
    case 'exists':
      return value !== undefined;
    case '!':
      return value === undefined;
    case 'gt':
    case 'lt': {
      if (value === undefined || r.values.length !== 1) return false;
      const have = parseInt64(value);
      const want = parseInt64(r.values[0]);
      if (have === undefined || want === undefined) return false;
      return r.operator === 'gt' ? have > want : have < want;
    }
  }
}

/** Requirement.String(): `k=v`, `k in (a,b)`, `!k`, … with multiple values sorted. */
export function requirementToString(r: Requirement): string {
  const prefix = r.operator === '!' ? '!' : '';
  if (r.operator === 'exists' || r.operator === '!') return prefix + r.key;
  const op = { in: ' in ', notin: ' notin ', '=': '=', '==': '==', '!=': '!=', gt: '>', lt: '<' }[r.operator];
  const values = r.values.length === 1 ? r.values[0] : [...r.values].sort().join(',');
  return r.operator === 'in' || r.operator === 'notin' ? `${r.key}${op}(${values})` : `${r.key}${op}${values}`;
}

// ---------------------------------------------------------------------------------------------
// Selector

/** A parsed selector: an AND of requirements, or the special selector that matches nothing. */
export class Selector {
  private static readonly all = new Selector([], false);
  private static readonly none = new Selector([], true);

  private constructor(
    /** Sorted by key (stable), like apimachinery's internalSelector. */
    readonly requirements: readonly Requirement[],
    private readonly nothing: boolean,
  ) {}

  static everything(): Selector {
    return Selector.all;
  }

  static nothing(): Selector {
    return Selector.none;
  }

  /** A selector over the given requirements (none ⇒ everything). */
  static of(requirements: readonly Requirement[]): Selector {
    return new Selector(
      [...requirements].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)),
      false,
    );
  }

  matches(labels: Labels): boolean {
    return !this.nothing && this.requirements.every((r) => requirementMatches(r, labels));
  }

  /** True when the selector does not restrict anything (labels.Selector.Empty()). */
  isEverything(): boolean {
    return !this.nothing && this.requirements.length === 0;
  }

  selectsNothing(): boolean {
    return this.nothing;
  }

  add(...requirements: Requirement[]): Selector {
    return this.nothing ? this : Selector.of([...this.requirements, ...requirements]);
  }

  /** The single value a `=`, `==` or one-value `in` requirement on key demands, if any. */
  requiresExactMatch(key: string): string | undefined {
    const r = this.requirements.find((x) => x.key === key);
    if (!r || !['=', '==', 'in'].includes(r.operator) || r.values.length !== 1) return undefined;
    return r.values[0];
  }

  /** Canonical string form; both "everything" and "nothing" print as "". */
  toString(): string {
    return this.requirements.map(requirementToString).join(',');
  }
}

/** A selector matching exactly the given labels (labels.SelectorFromSet); empty ⇒ everything. */
export function selectorFromSet(set: Labels): Selector {
  return Selector.of(Object.entries(set ?? {}).map(([key, value]) => ({ key, operator: '=', values: [value] })));
}

const LABEL_SELECTOR_OPERATORS: Record<string, Operator> = {
  In: 'in',
  NotIn: 'notin',
  Exists: 'exists',
  DoesNotExist: '!',
};

/**
 * metav1.LabelSelectorAsSelector. Kubernetes quirk kept on purpose: a null/undefined selector
 * selects nothing, while `{}` selects everything. Throws SelectorError on invalid content.
 */
export function labelSelectorAsSelector(ls: LabelSelectorLike | null | undefined): Selector {
  if (!ls) return Selector.nothing();
  const matchLabels = ls.matchLabels ?? {};
  const expressions = ls.matchExpressions ?? [];
  if (Object.keys(matchLabels).length + expressions.length === 0) return Selector.everything();
  const reqs: Requirement[] = Object.keys(matchLabels)
    .sort()
    .map((k) => newRequirement(k, '=', [matchLabels[k]]));
  for (const expr of expressions) {
    const op = Object.hasOwn(LABEL_SELECTOR_OPERATORS, expr.operator) ? LABEL_SELECTOR_OPERATORS[expr.operator] : undefined;
    // Fields left out decode as Go's zero values.
    if (!op) throw new SelectorError(`${JSON.stringify(expr.operator ?? '')} is not a valid label selector operator`);
    reqs.push(newRequirement(expr.key ?? '', op, expr.values ?? []));
  }
  return Selector.of(reqs);
}

/** Whether labels satisfy a metav1.LabelSelector (null selects nothing, `{}` everything). */
export function matchesLabelSelector(ls: LabelSelectorLike | null | undefined, labels: Labels): boolean {
  if (!ls) return false;
  let selector = compiledSelectors.get(ls);
  if (!selector) {
    selector = labelSelectorAsSelector(ls);
    compiledSelectors.set(ls, selector);
  }
  return selector.matches(labels);
}

/**
 * Selectors compiled by matchesLabelSelector, by the selector object. Its callers test one
 * selector of a cached object (a SidecarSet's, a namespaceSelector) against many pods per round or
 * per admission, and compiling (key and value grammar, sorting) cost more than matching. Keyed by
 * identity: a selector must not be changed in place once matched (callers pass those of cached
 * objects, which nothing changes).
 */
const compiledSelectors = new WeakMap<LabelSelectorLike, Selector>();

/** The selector string written to `status.labelSelector` and used in list queries. */
export function labelSelectorToString(ls: LabelSelectorLike | null | undefined): string {
  return labelSelectorAsSelector(ls).toString();
}

/** metav1.FormatLabelSelector, for human output: "<none>" when empty, "<error>" when invalid. */
export function formatLabelSelector(ls: LabelSelectorLike | null | undefined): string {
  let s: string;
  try {
    s = labelSelectorToString(ls);
  } catch {
    return '<error>';
  }
  return s === '' ? '<none>' : s;
}

// ---------------------------------------------------------------------------------------------
// String grammar
//
//   selector    ::= requirement | requirement "," selector
//   requirement ::= ["!"] KEY [ ("in" | "notin") "(" values ")" | ("=" | "==" | "!=" | ">" | "<") VALUE ]

type Token = 'end' | ')' | ',' | '!' | '==' | '=' | '>' | 'identifier' | 'in' | '<' | '!=' | 'notin' | '(';

interface Scanned {
  tok: Token;
  literal: string;
}

const KEYWORDS: Record<string, Token> = { in: 'in', notin: 'notin' };
const OPERATOR_TOKENS: Partial<Record<Token, Operator>> = {
  in: 'in',
  notin: 'notin',
  '=': '=',
  '==': '==',
  '!=': '!=',
  '>': 'gt',
  '<': 'lt',
};
const isWhitespace = (c: string) => c === ' ' || c === '\t' || c === '\r' || c === '\n';
const isSpecial = (c: string) => '=!(),><'.includes(c);

function lex(input: string): Scanned[] {
  const items: Scanned[] = [];
  let pos = 0;
  for (;;) {
    while (pos < input.length && isWhitespace(input[pos])) pos++;
    if (pos >= input.length) {
      items.push({ tok: 'end', literal: '' });
      return items;
    }
    const c = input[pos];
    if (isSpecial(c)) {
      // Longest operator wins: "!=" and "==" are the only two-character ones.
      const two = input.slice(pos, pos + 2);
      const lit = two === '!=' || two === '==' ? two : c;
      pos += lit.length;
      items.push({ tok: lit as Token, literal: lit });
      continue;
    }
    const start = pos;
    while (pos < input.length && !isSpecial(input[pos]) && !isWhitespace(input[pos])) pos++;
    const word = input.slice(start, pos);
    items.push({ tok: Object.hasOwn(KEYWORDS, word) ? KEYWORDS[word] : 'identifier', literal: word });
  }
}

class Parser {
  private position = 0;

  constructor(private readonly items: Scanned[]) {}

  // In value position the keywords "in"/"notin" are ordinary identifiers.
  private view(item: Scanned, values: boolean): Scanned {
    return values && (item.tok === 'in' || item.tok === 'notin') ? { tok: 'identifier', literal: item.literal } : item;
  }

  private lookahead(values = true): Scanned {
    return this.view(this.items[this.position], values);
  }

  private consume(values = true): Scanned {
    return this.view(this.items[this.position++], values);
  }

  parse(): Requirement[] {
    const reqs: Requirement[] = [];
    for (;;) {
      const { tok, literal } = this.lookahead();
      if (tok === 'end') return reqs;
      if (tok !== 'identifier' && tok !== '!') {
        throw new SelectorError(`found '${literal}', expected: !, identifier, or 'end of string'`);
      }
      try {
        reqs.push(this.parseRequirement());
      } catch (e) {
        throw new SelectorError(`unable to parse requirement: ${(e as Error).message}`);
      }
      const next = this.consume();
      if (next.tok === 'end') return reqs;
      if (next.tok !== ',') throw new SelectorError(`found '${next.literal}', expected: ',' or 'end of string'`);
      const after = this.lookahead();
      if (after.tok !== 'identifier' && after.tok !== '!') {
        throw new SelectorError(`found '${after.literal}', expected: identifier after ','`);
      }
    }
  }

  private parseRequirement(): Requirement {
    let operator: Operator | undefined;
    let item = this.consume();
    if (item.tok === '!') {
      operator = '!';
      item = this.consume();
    }
    if (item.tok !== 'identifier') throw new SelectorError(`found '${item.literal}', expected: identifier`);
    const key = item.literal;
    const keyErrs = isLabelKey(key);
    if (keyErrs.length) {
      throw new SelectorError(fieldErrorString({ type: 'FieldValueInvalid', field: '<nil>', badValue: key, detail: keyErrs.join('; ') }));
    }
    const next = this.lookahead().tok;
    if (next === 'end' || next === ',') return newRequirement(key, operator ?? 'exists', []);
    if (operator === '!') return newRequirement(key, '!', []);

    const opItem = this.consume(false);
    const op = Object.hasOwn(OPERATOR_TOKENS, opItem.tok) ? OPERATOR_TOKENS[opItem.tok] : undefined;
    if (!op) throw new SelectorError(`found '${opItem.literal}', expected: ${BINARY_OPERATORS.join(', ')}`);
    const values = op === 'in' || op === 'notin' ? this.parseValues() : this.parseExactValue();
    // Values form a set: deduplicated and sorted.
    return newRequirement(key, op, [...new Set(values)].sort());
  }

  private parseValues(): string[] {
    const open = this.consume();
    if (open.tok !== '(') throw new SelectorError(`found '${open.literal}' expected: '('`);
    const first = this.lookahead();
    if (first.tok === ')') {
      this.consume();
      return [''];
    }
    if (first.tok !== 'identifier' && first.tok !== ',') {
      throw new SelectorError(`found '${first.literal}', expected: ',', ')' or identifier`);
    }
    const values = this.parseIdentifiersList();
    if (this.consume().tok !== ')') throw new SelectorError(`found '${first.literal}', expected: ')'`);
    return values;
  }

  // "(a,,b)", "(,a)" and "(a,)" all contain the empty string as a value.
  private parseIdentifiersList(): string[] {
    const values: string[] = [];
    for (;;) {
      const item = this.consume();
      if (item.tok === 'identifier') {
        values.push(item.literal);
        const next = this.lookahead();
        if (next.tok === ',') continue;
        if (next.tok === ')') return values;
        throw new SelectorError(`found '${next.literal}', expected: ',' or ')'`);
      }
      if (item.tok === ',') {
        if (values.length === 0) values.push('');
        const next = this.lookahead().tok;
        if (next === ')') {
          values.push('');
          return values;
        }
        if (next === ',') values.push('');
        continue;
      }
      throw new SelectorError(`found '${item.literal}', expected: ',', or identifier`);
    }
  }

  private parseExactValue(): string[] {
    const next = this.lookahead().tok;
    if (next === 'end' || next === ',') return [''];
    const item = this.consume();
    if (item.tok === 'identifier') return [item.literal];
    throw new SelectorError(`found '${item.literal}', expected: identifier`);
  }
}

/** labels.Parse: the string grammar (`a=b,c!=d,e in (f,g),h notin (i),j,!k`). Throws SelectorError. */
export function parseSelector(input: string): Selector {
  return Selector.of(new Parser(lex(input)).parse());
}

/** metav1.ParseToLabelSelector: the string grammar back into a LabelSelector. Throws SelectorError. */
export function parseToLabelSelector(input: string): LabelSelectorLike {
  let reqs: readonly Requirement[];
  try {
    reqs = parseSelector(input).requirements;
  } catch (e) {
    throw new SelectorError(`couldn't parse the selector string "${input}": ${(e as Error).message}`);
  }
  const out: { matchLabels: Record<string, string>; matchExpressions: LabelSelectorRequirementLike[] } = {
    matchLabels: {},
    matchExpressions: [],
  };
  const toApi: Partial<Record<Operator, string>> = { in: 'In', notin: 'NotIn', exists: 'Exists', '!': 'DoesNotExist' };
  for (const r of reqs) {
    if (r.operator === '=' || r.operator === '==') {
      out.matchLabels[r.key] = r.values[0];
      continue;
    }
    if (r.operator === 'gt' || r.operator === 'lt') {
      throw new SelectorError(`${JSON.stringify(r.operator)} isn't supported in label selectors`);
    }
    const operator = toApi[r.operator];
    if (!operator) throw new SelectorError(`${JSON.stringify(r.operator)} is not a valid label selector operator`);
    out.matchExpressions.push({ key: r.key, operator, values: [...new Set(r.values)].sort() });
  }
  return out;
}
