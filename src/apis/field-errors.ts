// Field errors as Kubernetes reports them (apimachinery util/validation/field): every validating
// webhook and the structural schema check speak this one format, so messages name the field and the
// rule exactly like upstream, e.g. `spec.replicas: Invalid value: -1: must be greater than or equal to 0`.

export type FieldErrorType =
  | 'FieldValueInvalid'
  | 'FieldValueRequired'
  | 'FieldValueForbidden'
  | 'FieldValueNotSupported'
  | 'FieldValueDuplicate'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany'
  | 'FieldValueNotFound'
  | 'InternalError';

export interface FieldError {
  type: FieldErrorType;
  field: string;
  badValue?: unknown;
  detail: string;
}

const typeText: Record<FieldErrorType, string> = {
  FieldValueInvalid: 'Invalid value',
  FieldValueRequired: 'Required value',
  FieldValueForbidden: 'Forbidden',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueDuplicate: 'Duplicate value',
  FieldValueTooLong: 'Too long',
  FieldValueTooMany: 'Too many',
  FieldValueNotFound: 'Not found',
  InternalError: 'Internal error',
};

// Types whose message omits the bad value, as in apimachinery's ErrorBody.
const omitsValue = new Set<FieldErrorType>([
  'FieldValueRequired',
  'FieldValueForbidden',
  'FieldValueTooLong',
  'FieldValueTooMany',
  'InternalError',
]);

function formatValue(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

export function fieldErrorString(e: FieldError): string {
  let body = typeText[e.type];
  if (!omitsValue.has(e.type)) body += `: ${formatValue(e.badValue)}`;
  if (e.detail) body += `: ${e.detail}`;
  return `${e.field}: ${body}`;
}

/** apimachinery's aggregate: one message alone, several as "[a, b]", duplicates dropped. */
export function aggregateMessage(messages: string[]): string {
  const unique = [...new Set(messages)];
  return unique.length === 1 ? unique[0]! : `[${unique.join(', ')}]`;
}

export function fieldErrorsMessage(errs: FieldError[]): string {
  return aggregateMessage(errs.map(fieldErrorString));
}

export const invalid = (field: string, badValue: unknown, detail: string): FieldError => ({
  type: 'FieldValueInvalid',
  field,
  badValue,
  detail,
});
export const required = (field: string, detail = ''): FieldError => ({ type: 'FieldValueRequired', field, detail });
export const forbidden = (field: string, detail: string): FieldError => ({ type: 'FieldValueForbidden', field, detail });
export const duplicate = (field: string, badValue: unknown): FieldError => ({ type: 'FieldValueDuplicate', field, badValue, detail: '' });
export const notFound = (field: string, badValue: unknown): FieldError => ({ type: 'FieldValueNotFound', field, badValue, detail: '' });
export const notSupported = (field: string, badValue: unknown, valid: string[]): FieldError => ({
  type: 'FieldValueNotSupported',
  field,
  badValue,
  detail: valid.length ? `supported values: ${valid.map((v) => JSON.stringify(v)).join(', ')}` : '',
});
