// Shared by the non-workload webhook tests: example loading, contexts and a fake reader.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { FEATURE_GATE_DEFAULTS, type FeatureGates } from '../../../src/apis/features.ts';
import { type FieldError, fieldErrorsMessage } from '../../../src/apis/field-errors.ts';
import { parseSelector } from '../../../src/util/labelselector.ts';
import type { AdmissionContext, AdmissionReader, Operation } from '../../../src/runtime/webhook/types.ts';

const examplesDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'examples');

export function loadExamples(file: string, kind?: string): any[] {
  return parseAllDocuments(readFileSync(join(examplesDir, file), 'utf8'))
    .map((d) => d.toJSON())
    .filter((d) => d !== null && (!kind || d.kind === kind));
}

/** Objects served by the fake reader, matched on kind, name and namespace (apiVersion ignored). */
export function fakeReader(objects: any[]): AdmissionReader & { lists: string[] } {
  const lists: string[] = [];
  return {
    lists,
    async get(_apiVersion: string, kind: string, name: string, namespace?: string) {
      return (
        objects.find(
          (o) =>
            o.kind === kind && o.metadata?.name === name && (namespace === undefined || (o.metadata?.namespace ?? undefined) === namespace),
        ) ?? null
      );
    },
    async list(_apiVersion: string, kind: string, opts: { namespace?: string; labelSelector?: string }) {
      lists.push(kind);
      const sel = opts.labelSelector ? parseSelector(opts.labelSelector) : undefined;
      return objects.filter(
        (o) =>
          o.kind === kind &&
          (opts.namespace === undefined || o.metadata?.namespace === opts.namespace) &&
          (!sel || sel.matches(o.metadata?.labels ?? {})),
      );
    },
  };
}

export function admission(
  apiVersion: string,
  operation: Operation = 'CREATE',
  opts: { gates?: Partial<FeatureGates>; reader?: AdmissionReader; namespace?: string } = {},
): AdmissionContext {
  return {
    operation,
    apiVersion,
    userInfo: {},
    dryRun: false,
    namespace: opts.namespace,
    features: { ...FEATURE_GATE_DEFAULTS, ...opts.gates },
    reader: opts.reader,
  };
}

export const msg = (errs: FieldError[]) => (errs.length ? fieldErrorsMessage(errs) : '');
