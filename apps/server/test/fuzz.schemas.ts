import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';
import * as fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { RawJson } from './fuzz.encoding.js';
import { isRecord } from './fuzz.types.js';
import type { FuzzOperation, FuzzParameter, JsonSchema } from './fuzz.types.js';

// The fuzz engine (see fuzz.ts) from the OpenAPI document: its operations, arbitraries of values its schemas
// accept or break, and whether the server must refuse a body.

// ---------------------------------------------------------------------------------------------------------------
// The OpenAPI document

/**
 * Every operation of an OpenAPI 3.1 document (`GET /api/v1/openapi.json`), with its parameters and JSON body.
 *
 * @example
 * const operations = operationsOf((await app.inject({ url: '/api/v1/openapi.json' })).json());
 */
export function operationsOf(document: unknown): FuzzOperation[] {
  if (!isRecord(document) || !isRecord(document.paths)) throw new Error('not an OpenAPI document: no paths');
  const operations: FuzzOperation[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    if (!isRecord(item)) continue;
    for (const [method, raw] of Object.entries(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method) || !isRecord(raw)) continue;
      const parameters: FuzzParameter[] = (Array.isArray(raw.parameters) ? raw.parameters : []).filter(isRecord)
        .filter((p) => p.in === 'path' || p.in === 'query')
        .map((p) => ({ name: String(p.name), location: p.in as 'path' | 'query', required: p.required === true, schema: isRecord(p.schema) ? p.schema : {} }));
      const requestBody = isRecord(raw.requestBody) ? raw.requestBody : undefined;
      const content = isRecord(requestBody?.content) ? requestBody.content : {};
      const json = isRecord(content['application/json']) ? content['application/json'] : undefined;
      const security = Array.isArray(raw.security) ? raw.security : Array.isArray(document.security) ? document.security : [];
      const responses = isRecord(raw.responses) ? raw.responses : {};
      const streams = Object.entries(responses).some(([status, response]) =>
        status.startsWith('2') && isRecord(response) && isRecord(response.content) && 'text/event-stream' in response.content);
      operations.push({
        id: typeof raw.operationId === 'string' ? raw.operationId : `${method.toUpperCase()} ${path}`,
        method: method.toUpperCase(),
        path,
        parameters,
        body: json !== undefined && isRecord(json.schema) ? json.schema : undefined,
        bodyRequired: requestBody?.required === true,
        needsCredential: security.length > 0 && security.every((alternative) => isRecord(alternative) && Object.keys(alternative).length > 0),
        streams,
      });
    }
  }
  return operations;
}

/** The operations of the document an app serves. */
export async function readOperations(app: FastifyInstance): Promise<FuzzOperation[]> {
  const res = await app.inject({ url: '/api/v1/openapi.json' });
  if (res.statusCode !== 200) throw new Error(`GET /api/v1/openapi.json answered ${res.statusCode}`);
  return operationsOf(res.json());
}

// ---------------------------------------------------------------------------------------------------------------
// Arbitraries from schemas

/** Strings that mean something to SQL, JSON path, Mongo-style filters, shells, templates and path resolution. */
export const METACHARACTER_STRINGS: readonly string[] = [
  "' OR 1=1 --", "'; DROP TABLE comments; --", '" OR ""="', '1; select pg_sleep(5)', "') union select * from api_keys --",
  '%', '_', '%_%', '\\', '\\%', '*', '$.a[*]', '$..*', '@.x', '$[?(@.a>1)]', '{"$gt":""}', '{"$ne":null}', '$where',
  '../../../../etc/passwd', '..\\..\\windows\\win.ini', '%2e%2e%2f%2e%2e%2f', '..%2f..%2f', '/', '.', '..',
  '${7*7}', '{{7*7}}', '<script>alert(1)</script>', '\r\nSet-Cookie: x=1', '\u0000', 'a\u0000b', '\ud800', '\udfff',
  '\u202e\u0635', 'Z\u0351\u0360\u036b\u0343\u036a\u0302', '😀', '\ufeff', ' ', '\t', 'null', 'undefined', 'NaN', '-0',
];

/** Everything a parameter or property named in `hints` should often be: ids and names of real rows. */
export type Hints = Record<string, readonly unknown[]>;

const ARRAY_SPAN = 4;
const STRING_SPAN = 48;
const MAX_DEPTH = 6;

/** Code points of a string (what ajv's minLength/maxLength count). */
const codePoints = (text: string) => [...text].length;

/** The types a schema node names (`type`, a string or an array), none when it names none. */
export function typesOf(schema: JsonSchema): string[] {
  if (Array.isArray(schema.type)) return schema.type.map(String);
  if (typeof schema.type === 'string') return [schema.type];
  return [];
}

function stringArbitrary(schema: JsonSchema): fc.Arbitrary<string> {
  if (typeof schema.pattern === 'string') return fc.stringMatching(new RegExp(schema.pattern));
  const min = typeof schema.minLength === 'number' ? schema.minLength : 0;
  const limit = typeof schema.maxLength === 'number' ? schema.maxLength : Number.POSITIVE_INFINITY;
  const max = Math.max(min, Math.min(limit, STRING_SPAN));
  const fits = (text: string) => codePoints(text) >= min && codePoints(text) <= limit;
  const options: Array<fc.WeightedArbitrary<string>> = [
    { weight: 3, arbitrary: fc.string({ minLength: min, maxLength: max }) },
    { weight: 2, arbitrary: fc.string({ unit: 'binary', minLength: min, maxLength: max }) },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme', minLength: min, maxLength: max }).filter(fits) },
  ];
  const metas = METACHARACTER_STRINGS.filter(fits);
  if (metas.length > 0) options.push({ weight: 2, arbitrary: fc.constantFrom(...metas) });
  // The longest string the schema allows, in 4-byte characters: the limit counts code points, not UTF-16 units.
  if (Number.isFinite(limit) && limit <= 20_000) options.push({ weight: 1, arbitrary: fc.constant('😀'.repeat(limit)) });
  return fc.oneof(...options);
}

function numberArbitrary(schema: JsonSchema, integer: boolean): fc.Arbitrary<number> {
  const minimum = typeof schema.minimum === 'number' ? schema.minimum : undefined;
  const maximum = typeof schema.maximum === 'number' ? schema.maximum : undefined;
  if (integer) {
    const min = minimum ?? -2147483648;
    const max = maximum ?? (minimum !== undefined ? Math.max(min, 1_000_000) : 2147483647);
    const edges = [min, max, ...(maximum === undefined ? [Number.MAX_SAFE_INTEGER] : [])];
    return fc.oneof({ weight: 4, arbitrary: fc.integer({ min, max: Math.min(max, 2147483647) }) }, { weight: 1, arbitrary: fc.constantFrom(...edges) });
  }
  return fc.oneof(
    { weight: 4, arbitrary: fc.double({ min: minimum ?? -1e15, max: maximum ?? 1e15, noNaN: true, noDefaultInfinity: true }) },
    { weight: 1, arbitrary: fc.constantFrom(...[minimum ?? -Number.MAX_VALUE, maximum ?? Number.MAX_VALUE, 0, -0, 5e-324].filter((n) => (minimum === undefined || n >= minimum) && (maximum === undefined || n <= maximum))) },
  );
}

/** Keys an open object (additionalProperties) is given besides its own. */
const EXTRA_KEYS = ['extra', '$gt', '$where', 'a.b', 'a[0]', '', ' ', '😀', 'constructor', 'toString', 'hasOwnProperty', '__defineGetter__'];

/**
 * An arbitrary of values valid against `schema`: the name (a parameter's or property's, an array's for its items)
 * picks real values from `hints` two times in three, so that requests reach real rows.
 *
 * @example
 * fc.sample(validValue({ type: 'integer', minimum: 1 }, 'deploymentId', { deploymentId: [7] }), 9); // mostly 7, else integers >= 1
 */
export function validValue(schema: JsonSchema, name: string, hints: Hints, depth = 0): fc.Arbitrary<unknown> {
  const generic = genericValid(schema, name, hints, depth);
  const hinted = hints[name];
  return hinted !== undefined && hinted.length > 0 && !isRecord(schema.properties)
    ? fc.oneof({ weight: 2, arbitrary: fc.constantFrom(...hinted) }, { weight: 1, arbitrary: generic })
    : generic;
}

function genericValid(schema: JsonSchema, name: string, hints: Hints, depth: number): fc.Arbitrary<unknown> {
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return fc.constantFrom(...(schema.enum as unknown[]));
  if ('const' in schema) return fc.constant(schema.const);
  const alternatives = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : undefined;
  if (alternatives !== undefined) return fc.oneof(...alternatives.filter(isRecord).map((branch) => validValue(branch, name, hints, depth)));
  const types = typesOf(schema);
  if (types.length > 1) return fc.oneof(...types.map((type) => genericValid({ ...schema, type }, name, hints, depth)));
  switch (types[0]) {
    case 'string': return stringArbitrary(schema);
    case 'integer': return numberArbitrary(schema, true);
    case 'number': return numberArbitrary(schema, false);
    case 'boolean': return fc.boolean();
    case 'null': return fc.constant(null);
    case 'array': return arrayArbitrary(schema, name, hints, depth);
    case 'object': return objectArbitrary(schema, name, hints, depth);
    default: return fc.jsonValue({ maxDepth: 2 });
  }
}

function arrayArbitrary(schema: JsonSchema, name: string, hints: Hints, depth: number): fc.Arbitrary<unknown[]> {
  // OpenAPI 3.1 speaks JSON Schema 2020-12: a tuple is `prefixItems` (svc closes its tuples with `items: false`).
  if (Array.isArray(schema.prefixItems)) return fc.tuple(...schema.prefixItems.filter(isRecord).map((item) => validValue(item, name, hints, depth + 1)));
  const items = isRecord(schema.items) ? schema.items : {};
  const minLength = typeof schema.minItems === 'number' ? schema.minItems : 0;
  const maxItems = typeof schema.maxItems === 'number' ? schema.maxItems : ARRAY_SPAN;
  const maxLength = depth >= MAX_DEPTH ? minLength : Math.max(minLength, Math.min(maxItems, ARRAY_SPAN));
  return fc.array(validValue(items, name, hints, depth + 1), { minLength, maxLength });
}

function objectArbitrary(schema: JsonSchema, name: string, hints: Hints, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const properties = isRecord(schema.properties) ? schema.properties : {};
  const required = Array.isArray(schema.required) ? schema.required.map(String) : [];
  const keys = Object.keys(properties).filter((key) => depth < MAX_DEPTH || required.includes(key));
  const model = Object.fromEntries(keys.map((key) => [key, validValue(properties[key] as JsonSchema, key, hints, depth + 1)]));
  const own = fc.record(model, { requiredKeys: required.filter((key) => keys.includes(key)) }) as fc.Arbitrary<Record<string, unknown>>;
  const additional = schema.additionalProperties;
  if (additional === false || additional === undefined && Object.keys(properties).length > 0 || depth >= MAX_DEPTH) return own;
  // Records (filters by member, fields) take real member names as keys; other open objects take odd keys.
  const keyHints = hints[`${name}Keys`] ?? [];
  const key = keyHints.length > 0 ? fc.constantFrom(...(keyHints as string[])) : fc.oneof(fc.constantFrom(...EXTRA_KEYS), fc.string({ maxLength: 12 }));
  const value = isRecord(additional) ? validValue(additional, name, hints, depth + 1) : fc.jsonValue({ maxDepth: 2 });
  const extra = fc.dictionary(key.filter((k) => k !== '__proto__' && !(k in properties)), value, { maxKeys: 3 });
  return fc.tuple(own, extra).map(([mine, more]) => Object.assign(Object.create(null) as Record<string, unknown>, more, mine));
}

/** Numbers in JSON text that JSON.stringify cannot write, and others at or past every edge. */
const NUMBER_BREAKS: readonly unknown[] = [
  new RawJson('9007199254740993'), new RawJson('1e309'), new RawJson('-1e309'), new RawJson('-0'), new RawJson('1E2'), new RawJson('1.0'),
  new RawJson('0.1e1'), new RawJson('123456789012345678901234567890'), new RawJson('4.9e-325'),
  0.5, -1, 0, 2147483648, -2147483649, 2 ** 53, 2 ** 63, Number.MAX_VALUE, -Number.MAX_VALUE, 5e-324,
];

/** Values of every JSON type, and shapes that smuggle operators. */
const TYPE_BREAKS: readonly unknown[] = [
  null, true, false, 0, 1, '', '1', 'true', [], [1], {}, { $gt: '' }, { $ne: null }, [{ $ne: null }], [[[[[]]]]], { a: { b: { c: {} } } },
];

/**
 * An arbitrary of values that probably break `schema` (a wrong type, a number past its edges or not an integer,
 * a string too long or empty or off its pattern, an array too long, an object missing a required key or with an
 * unknown one). "Probably": the verdict is ajv's, on the text the server parses (see `bodyVerdict`).
 */
export function breakingValue(schema: JsonSchema): fc.Arbitrary<unknown> {
  const options: Array<fc.Arbitrary<unknown>> = [fc.constantFrom(...TYPE_BREAKS), fc.constantFrom(...NUMBER_BREAKS)];
  const types = typesOf(schema);
  if (typeof schema.minimum === 'number') options.push(fc.constant(schema.minimum - 1));
  if (typeof schema.maximum === 'number') options.push(fc.constantFrom(schema.maximum + 1, schema.maximum + 0.5));
  if (types.includes('string') || types.length === 0) {
    const limit = typeof schema.maxLength === 'number' ? schema.maxLength : 1000;
    options.push(fc.constantFrom(
      'a'.repeat(limit + 1), '😀'.repeat(limit + 1), 'x'.repeat(100_000), '', '\u0000', 'UPPER-CASE', '-lead', 'a'.repeat(37), 'a_b',
      ...METACHARACTER_STRINGS,
    ));
  }
  if (types.includes('array') || isRecord(schema.items)) {
    const count = (typeof schema.maxItems === 'number' ? schema.maxItems : 100) + 1;
    options.push(fc.constantFrom(Array.from({ length: count }, () => 'a'), Array.from({ length: count }, () => 1), [null], [{}]));
  }
  if (isRecord(schema.properties)) {
    options.push(fc.constant({ ...Object.fromEntries(Object.keys(schema.properties).map((key) => [key, null])) }));
    options.push(fc.constant({ fuzzUnknownField: 1 }));
  }
  return fc.oneof(...options);
}

/**
 * A value of `schema` with exactly one place broken: the whole value, one property (recursively), a required
 * property left out, an unknown property added, or one item of an array.
 */
export function mutatedValue(schema: JsonSchema, name: string, hints: Hints, depth = 0, base: fc.Arbitrary<unknown> = validValue(schema, name, hints, depth)): fc.Arbitrary<unknown> {
  const options: Array<fc.WeightedArbitrary<unknown>> = [{ weight: 2, arbitrary: breakingValue(schema) }];
  const alternatives = Array.isArray(schema.anyOf) ? schema.anyOf.filter(isRecord) : [];
  if (alternatives.length > 0 && depth < MAX_DEPTH) {
    options.push({ weight: 2, arbitrary: fc.oneof(...alternatives.map((branch) => mutatedValue(branch, name, hints, depth + 1))) });
  }
  const properties = isRecord(schema.properties) ? schema.properties : undefined;
  if (properties !== undefined && depth < MAX_DEPTH) {
    const objects = base.filter(isRecord);
    for (const [key, child] of Object.entries(properties)) {
      if (!isRecord(child)) continue;
      options.push({ weight: 3, arbitrary: fc.tuple(objects, mutatedValue(child, key, hints, depth + 1)).map(([object, value]) => ({ ...object, [key]: value })) });
    }
    const required = Array.isArray(schema.required) ? schema.required.map(String) : [];
    if (required.length > 0) {
      options.push({ weight: 1, arbitrary: fc.tuple(objects, fc.constantFrom(...required)).map(([object, drop]) => Object.fromEntries(Object.entries(object).filter(([key]) => key !== drop))) });
    }
    options.push({ weight: 1, arbitrary: fc.tuple(objects, fc.constantFrom(...EXTRA_KEYS.filter((key) => !(key in properties)))).map(([object, key]) => ({ ...object, [key]: 'fuzz' })) });
  }
  if (isRecord(schema.items) && depth < MAX_DEPTH) {
    const arrays = base.filter((value): value is unknown[] => Array.isArray(value));
    options.push({ weight: 2, arbitrary: fc.tuple(arrays, mutatedValue(schema.items, name, hints, depth + 1)).map(([items, value]) => [...items, value]) });
  }
  return fc.oneof(...options);
}

// ---------------------------------------------------------------------------------------------------------------
// Verdicts: what the server must refuse

// The document's dialect (OpenAPI 3.1: JSON Schema 2020-12), not Ajv's default draft-07.
const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: false });
const validators = new WeakMap<JsonSchema, ValidateFunction>();

function validatorOf(schema: JsonSchema): ValidateFunction {
  let validate = validators.get(schema);
  if (validate === undefined) {
    validate = ajv.compile(schema);
    validators.set(schema, validate);
  }
  return validate;
}

/**
 * Whether a parsed JSON value has a key Fastify's parser (secure-json-parse) refuses: `__proto__`, or `constructor`
 * holding `prototype`. Breadth first, as that parser scans, so 100,000 levels cost no stack.
 */
function hasPoisonKey(value: unknown): boolean {
  const has = (node: object, key: string) => Object.prototype.hasOwnProperty.call(node, key);
  let level: unknown[] = [value];
  while (level.length > 0) {
    const next: unknown[] = [];
    for (const node of level) {
      if (node === null || typeof node !== 'object') continue;
      if (has(node, '__proto__')) return true;
      const constructor = (node as Record<string, unknown>).constructor;
      if (has(node, 'constructor') && constructor !== null && typeof constructor === 'object' && has(constructor, 'prototype')) return true;
      next.push(...Object.values(node));
    }
    level = next;
  }
  return false;
}

/**
 * Why the server must refuse a JSON body for `schema`, or undefined when the published schema accepts it: the text
 * is not JSON, carries a prototype-poisoning key, or breaks the schema (ajv, no type coercion: svc validates bodies
 * as sent).
 *
 * @example
 * bodyVerdict({ type: 'object', required: ['body'] }, '{}'); // "the body breaks the published schema: must have required property 'body'"
 */
export function bodyVerdict(schema: JsonSchema, text: string): string | undefined {
  let parsed: unknown;
  try {
    // Fastify's parser drops a byte order mark first.
    parsed = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch {
    return 'the body is not JSON';
  }
  if (hasPoisonKey(parsed)) return 'the body has a __proto__ or constructor.prototype key';
  const validate = validatorOf(schema);
  if (validate(parsed)) return undefined;
  const error = validate.errors?.[0];
  return `the body breaks the published schema: ${error?.instancePath || '(root)'} ${error?.message ?? 'is invalid'}`;
}
