// JSON as the API server hands it: the one test for "a JSON object", which decoders, converters,
// patches and Go-layout encoders all ask before they look inside a value.

export type JsonObject = Record<string, unknown>;

/** A JSON object: not null, not an array. */
export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
