import * as fc from 'fast-check';
import { percentEncode, toJsonText } from './fuzz.encoding.js';
import type { FuzzFixtures } from './fuzz.fixtures.js';
import { METACHARACTER_STRINGS, bodyVerdict, breakingValue, mutatedValue, validValue } from './fuzz.schemas.js';
import type { FuzzOperation, FuzzRequest } from './fuzz.types.js';

// Generated requests of the fuzz engine (see fuzz.ts): one arbitrary per operation of the OpenAPI document.

// ---------------------------------------------------------------------------------------------------------------
// Requests of an operation

const RAW_PATH_BREAKS: readonly string[] = [
  '0', '-1', '-0', '1e309', '9007199254740993', '2147483648', '1.5', '0x1', '%201', '1%20', 'NaN', 'Infinity', 'null', 'true',
  '..', '.', '%2e%2e', '%2e%2e%2f%2e%2e%2fetc%2fpasswd', '..%2f..%2fetc%2fpasswd', '..%5c..%5cwindows', '%252e%252e%252f',
  '%FF', '%C0%AF', '%', '%ZZ', '%00', 'a%00b', '%0D%0ASet-Cookie:%20x=1', '*', 'a'.repeat(200), 'a'.repeat(201), 'a'.repeat(5000),
  ...METACHARACTER_STRINGS.map(percentEncode), percentEncode('😀'.repeat(60)),
];

const RAW_QUERY_BREAKS: readonly string[] = [
  '%FF', '%C0%AF', '%', '%ZZ', '%00', 'a%00b', '1e309', '-1e309', '-0', '9007199254740993', '-1', '0', '1.5', 'NaN', 'Infinity', '0x10', '',
  'true', 'false', 'null', '[]', '{}', '%2e%2e%2f%2e%2e%2f', 'a'.repeat(256), 'a'.repeat(1025), 'x'.repeat(100_000),
  percentEncode('😀'.repeat(256)), ...METACHARACTER_STRINGS.map(percentEncode),
];

const JSON_TYPES = ['application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON'];
const OTHER_TYPES = [
  'text/plain', 'multipart/form-data; boundary=fuzz', 'application/x-www-form-urlencoded', 'application/xml', 'application/json-patch+json',
  'application/json; charset=utf-16', 'application/jsonx', '*/*', 'application/json, text/plain', ';;;', '',
];

/** Breaks of JSON text itself (the body parser's business rather than the schema's). */
function framedTexts(valid: string): string[] {
  const half = valid.slice(0, Math.floor(valid.length / 2));
  return [
    half, `${valid}x`, `${valid}${valid}`, `\ufeff${valid}`, valid.replaceAll('"', "'"), valid.replace(/}$/, ',}'), `/* c */${valid}`,
    'NaN', 'Infinity', '1e309', 'null', '""', '[]', '0', '{', '}', '{"a":}', '{"a" 1}', '[1,]', '\u0000', ' ', '',
    '{"__proto__":{"isAdmin":true}}', '{"constructor":{"prototype":{"isAdmin":true}}}', `{"a":${'['.repeat(64)}${']'.repeat(64)}}`,
  ];
}

/** The UTF-8 bytes of `text` with bytes that are never valid UTF-8 put inside its first string value. */
export function withInvalidUtf8(text: string): Buffer {
  const quote = text.indexOf('":"');
  const at = quote === -1 ? Math.floor(text.length / 2) : quote + 3;
  return Buffer.concat([Buffer.from(text.slice(0, at), 'utf8'), Buffer.from([0xff, 0xfe, 0xc0, 0xaf, 0xed, 0xa0, 0x80, 0xf8]), Buffer.from(text.slice(at), 'utf8')]);
}

function queryPairs(name: string, value: unknown): string[] {
  if (Array.isArray(value)) return value.map((item) => `${percentEncode(name)}=${percentEncode(String(item))}`);
  return [`${percentEncode(name)}=${percentEncode(String(value))}`];
}

interface Parts {
  path: Record<string, string>;
  query: string[];
  body: unknown;
  headers: Record<string, string>;
}

/**
 * The arbitrary of requests of one operation: valid requests (schema-valid values, often real ids) and ones
 * broken in one place (a path parameter, a query parameter, the JSON body, its framing or content type), each
 * with a credential of the fixtures or a generated garbage Authorization header.
 *
 * @example
 * const requests = fc.sample(requestArbitrary(operation, fixtures), { seed: 42, numRuns: 30 });
 */
export function requestArbitrary(operation: FuzzOperation, fixtures: FuzzFixtures): fc.Arbitrary<FuzzRequest> {
  const hints = fixtures.hintsFor(operation);
  const pathParams = operation.parameters.filter((p) => p.location === 'path');
  const queryParams = operation.parameters.filter((p) => p.location === 'query');
  const exemplar = fixtures.exemplars[operation.id];
  const generatedPath = fc.record(Object.fromEntries(pathParams.map((p) => [p.name, validValue(p.schema, p.name, hints).map((v) => percentEncode(String(v)))]))) as fc.Arbitrary<Record<string, string>>;
  const exemplarPath = Object.fromEntries(Object.entries(exemplar?.path ?? {}).map(([name, value]) => [name, percentEncode(String(value))]));
  // The exemplar's headers go with its own path only: a generated path never gets them.
  const generatedPlace = generatedPath.map((path) => ({ path, headers: {} as Record<string, string> }));
  const validPlace = exemplar?.path === undefined ? generatedPlace : fc.oneof(generatedPlace, fc.constant({ path: exemplarPath, headers: exemplar.headers ?? {} }));
  const validQuery = fc.tuple(...queryParams.map((p) => fc.option(validValue(p.schema, p.name, hints), { nil: undefined, freq: 2 })))
    .map((values) => values.flatMap((value, i) => (value === undefined ? [] : queryPairs(queryParams[i]!.name, value))));
  const generatedBody = operation.body === undefined ? fc.constant(undefined) : validValue(operation.body, 'body', hints);
  const validBody = exemplar?.body === undefined ? generatedBody : fc.oneof(generatedBody, fc.constant(exemplar.body));
  const valid = fc.record({ place: validPlace, query: validQuery, body: validBody }).map(({ place, ...rest }) => ({ ...rest, ...place })) as fc.Arbitrary<Parts>;

  const labelled = (label: string, arbitrary: fc.Arbitrary<Parts & { contentType?: string; text?: string | Buffer }>) => arbitrary.map((parts) => ({ label, ...parts }));
  const variants: Array<fc.WeightedArbitrary<Parts & { label: string; contentType?: string; text?: string | Buffer }>> = [
    { weight: 5, arbitrary: labelled('valid', valid) },
  ];
  for (const p of pathParams) {
    variants.push({
      weight: 2,
      arbitrary: fc.tuple(valid, fc.oneof(fc.constantFrom(...RAW_PATH_BREAKS), breakingValue(p.schema).map((v) => percentEncode(toJsonText(v)))))
        .map(([parts, broken]) => ({ ...parts, label: `broken path ${p.name}`, path: { ...parts.path, [p.name]: broken } })),
    });
  }
  const queryNames = [...queryParams.map((p) => p.name), 'first', 'after', 'fuzz'];
  variants.push({
    weight: queryParams.length > 0 ? 2 : 1,
    arbitrary: fc.tuple(valid, fc.constantFrom(...queryNames), fc.oneof(
      fc.constantFrom(...RAW_QUERY_BREAKS).map((raw) => (name: string) => [`${name}=${raw}`]),
      fc.constant((name: string) => [`${name}=1`, `${name}=2`]),
      fc.constant((name: string) => [`${name}[]=x`, `${name}[$gt]=`]),
      fc.constant((name: string) => [name]),
      fc.constant((name: string) => Array.from({ length: 1000 }, (_, i) => `${name}=${i}`)),
    )).map(([parts, name, make]) => ({ ...parts, label: `broken query ${name}`, query: [...parts.query.filter((pair) => !pair.startsWith(`${name}=`)), ...make(name)] })),
  });
  if (operation.body !== undefined) {
    variants.push({
      weight: 4,
      arbitrary: fc.tuple(valid, mutatedValue(operation.body, 'body', hints, 0, validBody)).map(([parts, body]) => ({ ...parts, label: 'broken body', body })),
    });
  }
  variants.push({
    weight: operation.body !== undefined ? 2 : 1,
    arbitrary: fc.tuple(valid, fc.nat(), fc.oneof(fc.constantFrom(...OTHER_TYPES), fc.constantFrom(...JSON_TYPES), fc.constant(undefined))).map(([parts, pick, contentType]) => {
      const text = toJsonText(parts.body ?? { fuzz: 1 });
      const choices: Array<string | Buffer> = [...framedTexts(text), withInvalidUtf8(text), text, 'a=1&b=2', '--fuzz\r\nContent-Disposition: form-data; name="body"\r\n\r\nx\r\n--fuzz--\r\n'];
      return { ...parts, label: `framing ${contentType ?? '(no content type)'}`, contentType, text: choices[pick % choices.length]! };
    }),
  });

  const credentials = fixtures.credentialsFor(operation);
  // Mostly the credential that gets furthest into this operation, and every other one now and then.
  const best = fixtures.bestCredential(operation);
  const weightOf = (label: string) => (label === best ? 16 : label === 'admin' || label === 'embed' ? 4 : label === 'member' || label === 'embed-as-bearer' || label === 'none' ? 2 : 1);
  const credential = fc.oneof(
    ...Object.keys(credentials).map((label) => ({ weight: weightOf(label), arbitrary: fc.constant({ label, headers: credentials[label]! }) })),
    {
      weight: 2,
      arbitrary: fc.tuple(fc.constantFrom('Bearer ', 'Embed-Token ', 'Api-Key ', '', 'Bearer svc_'), fc.string({ unit: fc.integer({ min: 0x20, max: 0xff }).map((c) => String.fromCharCode(c)), maxLength: 300 }))
        .map(([scheme, rest]) => ({ label: 'garbage-generated', headers: { authorization: `${scheme}${rest}`.trim() } })),
    },
  );

  return fc.tuple(fc.oneof(...variants), credential).map(([parts, cred]) => {
    let path = operation.path;
    for (const [name, value] of Object.entries(parts.path)) path = path.replace(`{${name}}`, value);
    const url = parts.query.length > 0 ? `${path}?${parts.query.join('&')}` : path;
    const headers: Record<string, string> = { ...parts.headers, ...cred.headers };
    let payload: string | Buffer | undefined;
    let mustReject: string | undefined;
    if (parts.text !== undefined) {
      payload = parts.text;
      if (parts.contentType !== undefined) headers['content-type'] = parts.contentType;
      const mediaType = (parts.contentType ?? '').split(';')[0]!.trim().toLowerCase();
      if (operation.body !== undefined) {
        mustReject = mediaType !== 'application/json'
          ? `a JSON body sent as ${parts.contentType ?? '(no content type)'}`
          : bodyVerdict(operation.body, Buffer.isBuffer(payload) ? payload.toString('utf8') : payload);
      }
    } else if (operation.body !== undefined) {
      payload = toJsonText(parts.body);
      headers['content-type'] = 'application/json';
      mustReject = bodyVerdict(operation.body, payload);
    }
    if (operation.needsCredential && fixtures.unusable.has(cred.label)) mustReject ??= `credential ${cred.label} authenticates nobody`;
    return { operation: operation.id, label: parts.label, method: operation.method, url, headers, payload, credential: cred.label, mustReject };
  });
}
