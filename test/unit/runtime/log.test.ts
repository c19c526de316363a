// The log line formats of `--logging-format` and the rule that no JSON line carries a key twice.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Command } from 'commander';
import { formatTextLine, logger, loggingFormat, setLoggingFormat, type LoggingFormat } from '../../../src/runtime/log.ts';
import { addManagerFlags, managerConfig } from '../../../src/manager/options.ts';
import { addDaemonFlags, daemonConfig } from '../../../src/daemon/options.ts';

/** The lines the root logger (and its children) write while fn runs, in the given format. */
function captured(format: LoggingFormat, fn: () => void): string[] {
  const lines: string[] = [];
  const write = process.stdout.write.bind(process.stdout);
  const before = loggingFormat();
  setLoggingFormat(format);
  process.stdout.write = ((chunk: string) => (lines.push(chunk), true)) as typeof process.stdout.write;
  try {
    fn();
  } finally {
    process.stdout.write = write;
    setLoggingFormat(before);
  }
  return lines;
}

/** Every key of a JSON line as written, duplicates included. */
const keysOf = (line: string) => [...line.matchAll(/[{,]"([^"]+)":/g)].map((m) => m[1]);

test('no JSON line carries a key twice: a re-bound key and a call field naming a bound key take the new value in place', () => {
  const [rebound, clash, nested] = captured('json', () => {
    const component = logger.child({ component: 'kruise-daemon' });
    // e.g. the event recorder given the daemon's logger binds its own component.
    component.child({ component: 'events', controller: 'x' }).info('rebound');
    const controller = component.child({ controller: 'imagepuller', object: 'n1' });
    controller.info({ controller: 'other', extra: 1 }, 'clash');
    controller.child({ object: 'n2', reconcileID: 'r' }).child({ reconcileID: 's' }).warn('nested');
  });
  for (const line of [rebound, clash, nested]) {
    const keys = keysOf(line);
    assert.deepEqual(keys, [...new Set(keys)], line);
  }
  assert.deepEqual(
    [JSON.parse(rebound!), JSON.parse(clash!), JSON.parse(nested!)].map((r: Record<string, unknown>) => [
      r.component,
      r.controller,
      r.object,
      r.reconcileID,
      r.extra,
    ]),
    [
      ['events', 'x', undefined, undefined, undefined],
      ['kruise-daemon', 'other', 'n1', undefined, 1],
      ['kruise-daemon', 'imagepuller', 'n2', 's', undefined],
    ],
  );
});

test('text: klog structured lines (severity letter, MMDD time, pid, quoted message, key=value)', () => {
  const [info, error] = captured('text', () => {
    const log = logger.child({ controller: 'cloneset' });
    log.info({ object: 'default/web', replicas: 3, paused: false }, 'scaled');
    log.error({ err: new Error('boom') }, 'reconcile failed');
  });
  assert.match(
    info!,
    /^I\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+\] "scaled" controller="cloneset" object="default\/web" replicas=3 paused=false\n$/,
  );
  assert.match(error!, /^E\d{4} .*\] "reconcile failed" controller="cloneset" err="boom"\n$/);
  assert.equal(
    formatTextLine('{"level":"warn","time":"2026-12-06T01:02:03.456Z","pid":7,"hostname":"h","msg":"m","o":{"a":1}}'),
    'W1206 01:02:03.456000       7] "m" o={"a":1}\n',
  );
});

test("--logging-format: upstream's flag on the manager and the daemon, text or json only", () => {
  const manager = (args: string[]) => {
    const cmd = addManagerFlags(new Command('start').exitOverride().configureOutput({ writeErr: () => {} }));
    cmd.parse(args, { from: 'user' });
    return managerConfig(cmd.opts());
  };
  const daemon = (args: string[]) => {
    const cmd = addDaemonFlags(new Command('daemon').exitOverride().configureOutput({ writeErr: () => {} }));
    cmd.parse(['--node-name', 'n', ...args], { from: 'user' });
    return daemonConfig(cmd.opts(), {});
  };
  assert.equal(manager(['--logging-format=json']).loggingFormat, 'json');
  assert.equal(manager([]).loggingFormat, undefined);
  assert.equal(daemon(['--logging-format', 'text']).loggingFormat, 'text');
  assert.throws(() => manager(['--logging-format=logfmt']), /Allowed choices are text, json/);
});
