// Objects from files, as kubectl's -f reads them: YAML or JSON, several documents per file, a `List`
// flattened, `-` for stdin; and the resource each object's apiVersion + kind maps to on the server.
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import type { KubeObject } from '../../apis/core-objects.ts';
import { RestMapper } from '../../runtime/restmapper.ts';
import type { ResourceType } from '../../runtime/resources.ts';
import { errMessage } from '../../util/errors.ts';
import { CliError, describeError, type Session } from './session.ts';

export interface Manifest {
  obj: KubeObject;
  /** Where it was read from (kubectl names it in errors). */
  source: string;
}

/** The objects of YAML/JSON text: every document, `List` items flattened, empty documents skipped. */
export function parseManifests(text: string, source: string): Manifest[] {
  const out: Manifest[] = [];
  const add = (value: unknown) => {
    if (value === null || value === undefined) return;
    const obj = value as KubeObject & { items?: unknown[] };
    if (typeof obj !== 'object' || !obj.kind || !obj.apiVersion) {
      throw new CliError(`error validating "${source}": an object needs apiVersion and kind`);
    }
    if (obj.kind.endsWith('List') && Array.isArray(obj.items)) obj.items.forEach(add);
    else out.push({ obj: { ...obj, metadata: obj.metadata ?? {} }, source });
  };
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length > 0) throw new CliError(`error parsing ${source}: ${doc.errors[0]!.message}`);
    add(doc.toJS());
  }
  return out;
}

/** The objects of every -f (a file, or `-` for stdin). */
export function readManifests(files: readonly string[], stdin: () => string = () => readFileSync(0, 'utf8')): Manifest[] {
  return files.flatMap((file) => {
    let text: string;
    try {
      text = file === '-' ? stdin() : readFileSync(file, 'utf8');
    } catch (err) {
      throw new CliError(`the path "${file}" does not exist or cannot be read: ${errMessage(err)}`);
    }
    return parseManifests(text, file === '-' ? 'STDIN' : file);
  });
}

/** Maps manifests' apiVersion + kind to resources through the server's discovery (once per group version). */
export class ManifestMapper {
  private readonly mapper: RestMapper;
  constructor(session: Session) {
    this.mapper = new RestMapper(session.client);
  }

  async typeOf(m: Manifest): Promise<ResourceType> {
    const { apiVersion, kind } = m.obj;
    let mapping: ResourceType | undefined;
    try {
      mapping = await this.mapper.mapping(apiVersion!, kind!);
    } catch (err) {
      throw new CliError(describeError(err));
    }
    if (!mapping) {
      throw new CliError(
        `resource mapping not found for name: "${m.obj.metadata.name ?? ''}" namespace: "${m.obj.metadata.namespace ?? ''}" from "${m.source}": no matches for kind "${kind}" in version "${apiVersion}"\nensure CRDs are installed first`,
      );
    }
    return mapping;
  }
}

/**
 * The namespace an object from a file goes to: its own, else the session's; an explicit -n that
 * disagrees with the object's is refused, as kubectl does.
 */
export function namespaceFor(session: Session, type: ResourceType, obj: KubeObject): string | undefined {
  if (!type.namespaced) return undefined;
  const own = obj.metadata.namespace;
  if (own && session.namespaceExplicit && own !== session.namespace) {
    throw new CliError(
      `the namespace from the provided object "${own}" does not match the namespace "${session.namespace}". You must pass '--namespace=${own}' to perform this operation.`,
    );
  }
  return own || session.namespace;
}
