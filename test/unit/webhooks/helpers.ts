import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { FEATURE_GATE_DEFAULTS, type FeatureGates } from '../../../src/apis/features.ts';
import { type FieldError, fieldErrorsMessage } from '../../../src/apis/field-errors.ts';
import type { AdmissionContext, Operation } from '../../../src/runtime/webhook/types.ts';

const examplesDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'examples');

export function examples(file: string): any[] {
  return parseAllDocuments(readFileSync(join(examplesDir, file), 'utf8'))
    .map((d) => d.toJSON())
    .filter((d) => d !== null);
}

export function ctx(apiVersion: string, operation: Operation = 'CREATE', gates: Partial<FeatureGates> = {}): AdmissionContext {
  return { operation, apiVersion, userInfo: {}, dryRun: false, features: { ...FEATURE_GATE_DEFAULTS, ...gates } };
}

export const messages = (errs: FieldError[]) => (errs.length ? fieldErrorsMessage(errs) : '');
