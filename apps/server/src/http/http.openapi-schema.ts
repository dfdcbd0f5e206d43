/** Keywords whose value is an instance, not a schema: an `items` array inside them is data. */
const VALUE_KEYWORDS = new Set(['const', 'enum', 'default', 'example', 'examples']);
/** Keywords whose value maps names to schemas. */
const NAME_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas', 'response']);

/**
 * A JSON Schema as svc's routes write it (draft-07, what Ajv validates requests with) in the dialect of OpenAPI 3.1
 * (JSON Schema 2020-12), for the document only. One keyword differs in svc's schemas: a tuple, which draft-07
 * writes `items: [a, b]` with `additionalItems`, and 2020-12 writes `prefixItems: [a, b]` with `items`.
 * The input is never changed; a schema without a tuple comes back equal.
 *
 * @example
 * toOpenApiSchema({ type: 'array', items: [{ type: 'string' }], additionalItems: false });
 * // { type: 'array', prefixItems: [{ type: 'string' }], items: false }
 */
export function toOpenApiSchema(schema: unknown): unknown {
  return converted(schema, false);
}

/** `isNameMap`: the keys are names (of properties, of responses), so none of them is a keyword. */
function converted(schema: unknown, isNameMap: boolean): unknown {
  if (Array.isArray(schema)) return schema.map((item) => converted(item, false));
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    out[key] = !isNameMap && VALUE_KEYWORDS.has(key) ? value : converted(value, !isNameMap && NAME_MAPS.has(key));
  }
  if (isNameMap) return out;
  if (Array.isArray(out.items)) {
    out.prefixItems = out.items;
    if (out.additionalItems === undefined) delete out.items;
    else out.items = out.additionalItems;
    delete out.additionalItems;
  }
  return out;
}
