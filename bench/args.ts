// The bench scripts' command lines: node:util's parseArgs, with `--help` printing the script's own
// header comment (what it measures and its usage line: one place for both) and a flag it does not
// know answered in one line instead of a stack trace.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs, type ParseArgsConfig } from 'node:util';

/** The leading `//` comment of a script, as plain text. */
export function headerComment(file: string): string {
  const lines: string[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.startsWith('//')) break;
    lines.push(line.replace(/^\/\/ ?/, ''));
  }
  return lines.join('\n');
}

/** parseArgs(config) for the script at scriptUrl (its import.meta.url); exits on --help or a bad flag. */
export function benchArgs<T extends ParseArgsConfig>(scriptUrl: string, config: T): ReturnType<typeof parseArgs<T>> {
  const argv = config.args ?? process.argv.slice(2);
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${headerComment(fileURLToPath(scriptUrl))}\n`);
    process.exit(0);
  }
  try {
    return parseArgs(config);
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n(--help prints what the script measures and its flags)\n`);
    process.exit(2);
  }
}
