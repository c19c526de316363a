// A node:test reporter that writes one short block per failed test (file, name, error message and
// the first stack lines). hack/test.ts runs it beside the normal reporter and prints its file LAST,
// after the cluster logs, so a CI log that keeps only its tail still says why each test failed.
import path from 'node:path';
import { repoRoot } from '../src/cluster/binaries.ts';

interface FailEvent {
  type: string;
  data: { name: string; file?: string; nesting: number; details?: { error?: { cause?: unknown; message?: string } } };
}

function describeError(err: { cause?: unknown; message?: string } | undefined): string {
  const cause = err?.cause ?? err;
  const text = cause instanceof Error ? (cause.stack ?? `${cause.name}: ${cause.message}`) : String(cause);
  const lines = text.split('\n').filter((l) => !/^\s+at .*\(?node:/.test(l));
  return lines.slice(0, 8).join('\n').slice(0, 1500);
}

export default async function* failuresReporter(source: AsyncIterable<FailEvent>): AsyncGenerator<string> {
  for await (const event of source) {
    if (event.type !== 'test:fail') continue;
    const { name, file, details } = event.data;
    const where = file ? path.relative(repoRoot, file) : '?';
    yield `✖ ${where} › ${name}\n${describeError(details?.error).replace(/^/gm, '    ')}\n`;
  }
}
