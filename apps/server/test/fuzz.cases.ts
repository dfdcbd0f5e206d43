import * as fc from 'fast-check';
import { percentEncode, toJsonText } from './fuzz.encoding.js';
import type { FuzzFixtures } from './fuzz.fixtures.js';
import { withInvalidUtf8 } from './fuzz.requests.js';
import { bodyVerdict, breakingValue, typesOf, validValue } from './fuzz.schemas.js';
import { isRecord } from './fuzz.types.js';
import type { FuzzOperation, FuzzRequest, JsonSchema } from './fuzz.types.js';

// Hand-written cases of the fuzz engine (see fuzz.ts), for what generated requests rarely or never produce.

// ---------------------------------------------------------------------------------------------------------------
// Hand-written nasty cases

/** `{"a":{"a":...1...}}`, `depth` levels deep, as text (no recursion on either side of the wire to build it). */
export function deeplyNested(depth: number, open = '{"a":', close = '}', leaf = '1'): string {
  return `${open.repeat(depth)}${leaf}${close.repeat(depth)}`;
}

const TWO_MB = 2 * 1024 * 1024;

/** Strings each string field of a body is set to in turn: a NUL, a lone surrogate, SQL, Mongo and JSON-path syntax. */
const FIELD_POISONS = ['a\u0000b', '\ud800x', "' OR 1=1 --", '{"$gt":""}', '$.a[*]'];

type JsonPath = Array<string | number>;

/** Paths to every place of `schema` that may hold a string (object properties, first array items), 3 levels deep. */
function stringPaths(schema: JsonSchema, path: JsonPath = [], depth = 0): JsonPath[] {
  if (depth > 3) return [];
  const out: JsonPath[] = [];
  const branches = [schema, ...(Array.isArray(schema.anyOf) ? schema.anyOf.filter(isRecord) : [])];
  if (path.length > 0 && branches.some((branch) => typesOf(branch).includes('string'))) out.push(path);
  if (isRecord(schema.properties)) {
    for (const [key, child] of Object.entries(schema.properties)) if (isRecord(child)) out.push(...stringPaths(child, [...path, key], depth + 1));
  }
  if (isRecord(schema.items)) out.push(...stringPaths(schema.items, [...path, 0], depth + 1));
  return out;
}

/** A copy of a JSON value with `value` put at `path`, making the objects and arrays on the way. */
function withValueAt(base: unknown, path: JsonPath, value: unknown): unknown {
  if (path.length === 0) return value;
  const [head, ...rest] = path as [string | number, ...JsonPath];
  if (typeof head === 'number') {
    const items = Array.isArray(base) ? [...base] : [];
    items[head] = withValueAt(items[head], rest, value);
    return items;
  }
  const object: Record<string, unknown> = isRecord(base) ? { ...base } : {};
  object[head] = withValueAt(object[head], rest, value);
  return object;
}

/**
 * Hand-written nasty requests for one operation: a 2 MB body (413: the limit is 1 MiB), 10,000-deep JSON (as the
 * body and under each property), every wrong content type, invalid UTF-8, malformed JSON, duplicate keys,
 * `__proto__`/`constructor` keys, 20 kB headers, and path and query parameters made of traversal sequences,
 * percent-encoding that decodes to invalid UTF-8, overflowing numbers and SQL or JSON-path metacharacters.
 */
export function nastyRequests(operation: FuzzOperation, fixtures: FuzzFixtures): FuzzRequest[] {
  const credential = fixtures.bestCredential(operation);
  const auth = fixtures.credentialsFor(operation)[credential]!;
  const hints = fixtures.hintsFor(operation);
  const first = (name: string) => hints[name]?.[0];
  const pathParams = operation.parameters.filter((p) => p.location === 'path');
  const exemplar = fixtures.exemplars[operation.id];
  const pathOf = (override: Record<string, string> = {}) => operation.path.replace(/\{(\w+)\}/g, (_, name: string) => override[name] ?? percentEncode(String(exemplar?.path?.[name] ?? first(name) ?? '1')));
  const validBody = operation.body === undefined ? undefined : exemplar?.body ?? fc.sample(validValue(operation.body, 'body', hints), { seed: 8, numRuns: 1 })[0];
  const bodyText = validBody === undefined ? '{}' : toJsonText(validBody);
  const out: FuzzRequest[] = [];
  const add = (label: string, request: Partial<FuzzRequest> & { payload?: string | Buffer; contentType?: string | null }) => {
    const headers: Record<string, string> = { ...auth, ...request.headers };
    if (request.contentType !== null && request.payload !== undefined) headers['content-type'] = request.contentType ?? 'application/json';
    out.push({
      operation: operation.id, label: `nasty: ${label}`, method: request.method ?? operation.method, url: request.url ?? pathOf(), headers,
      payload: request.payload, credential, mustReject: request.mustReject, expectStatus: request.expectStatus,
    });
  };
  const hasBodyMethod = operation.method !== 'GET';
  const verdict = (text: string) => (operation.body === undefined ? undefined : bodyVerdict(operation.body, text));

  if (hasBodyMethod) {
    // The limit is 1 MiB (app.ts bodyLimit); a JSON string just past 2 MB, valid but for its size.
    add('2 MB JSON body', { payload: JSON.stringify({ ...(isRecord(validBody) ? validBody : {}), body: 'x'.repeat(TWO_MB) }), expectStatus: [413], mustReject: 'over the body limit' });
    add('2 MB body without a content type', { payload: Buffer.alloc(TWO_MB, 0x61), contentType: null, expectStatus: operation.body === undefined ? undefined : [413, 415], mustReject: operation.body === undefined ? undefined : 'over the body limit' });
    add('10,000-deep nested arrays as the body', { payload: deeplyNested(10_000, '[', ']', ''), mustReject: verdict(deeplyNested(10_000, '[', ']', '')) });
    add('10,000-deep nested objects as the body', { payload: deeplyNested(10_000), mustReject: verdict(deeplyNested(10_000)) });
    add('100,000-deep nested arrays as the body', { payload: deeplyNested(100_000, '[', ']', ''), mustReject: verdict(deeplyNested(100_000, '[', ']', '')) });
    for (const contentType of ['text/plain', 'multipart/form-data; boundary=fuzz', 'application/x-www-form-urlencoded']) {
      add(`JSON sent as ${contentType}`, { payload: bodyText, contentType, mustReject: operation.body === undefined ? undefined : `a JSON body sent as ${contentType}` });
    }
    add('JSON sent without a content type', { payload: bodyText, contentType: null, mustReject: operation.body === undefined ? undefined : 'a JSON body sent without a content type' });
    add('form fields', { payload: 'body=x&resolved=true&deploymentId=1', contentType: 'application/x-www-form-urlencoded', mustReject: operation.body === undefined ? undefined : 'a form body' });
    add('invalid UTF-8 in a JSON string', { payload: withInvalidUtf8(bodyText), mustReject: verdict(withInvalidUtf8(bodyText).toString('utf8')) });
    add('invalid UTF-8 only', { payload: Buffer.from([0xff, 0xfe, 0xfd, 0xc0, 0xaf]), mustReject: 'the body is not JSON' });
    add('UTF-16 body', { payload: Buffer.from(bodyText, 'utf16le'), contentType: 'application/json; charset=utf-16', mustReject: operation.body === undefined ? undefined : 'a UTF-16 body' });
    for (const text of ['{', '{"a":1', '[1,]', "{'a':1}", 'NaN', '\u0000', `${bodyText}{"a":2}`, `${bodyText} x`]) {
      add(`malformed JSON ${JSON.stringify(text.slice(0, 20))}`, { payload: text, mustReject: operation.body === undefined ? undefined : 'the body is not JSON' });
    }
    add('a byte order mark before the JSON', { payload: `\ufeff${bodyText}`, mustReject: verdict(`\ufeff${bodyText}`) });
    add('empty body with a JSON content type', { payload: '', mustReject: operation.body === undefined ? undefined : 'an empty body' });
    add('no body at all', { payload: undefined, contentType: null, mustReject: operation.bodyRequired ? 'no body, which the operation requires' : undefined });
    add('__proto__ key', { payload: bodyText.replace(/^\{/, '{"__proto__":{"isAdmin":true},'), mustReject: 'the body has a __proto__ key' });
    add('nested __proto__ key', { payload: `{"x":{"y":{"__proto__":{"polluted":1}}}}`, mustReject: 'the body has a __proto__ key' });
    add('constructor.prototype key', { payload: bodyText.replace(/^\{/, '{"constructor":{"prototype":{"isAdmin":true}},'), mustReject: 'the body has a constructor.prototype key' });
    const body = operation.body;
    for (const path of body === undefined ? [] : stringPaths(body)) {
      for (const poison of FIELD_POISONS) {
        const text = toJsonText(withValueAt(validBody, path, poison));
        add(`${path.join('.')} = ${JSON.stringify(poison)}`, { payload: text, mustReject: verdict(text) });
      }
    }
    if (body !== undefined && isRecord(body.properties)) {
      for (const [key, schema] of Object.entries(body.properties)) {
        const others = isRecord(validBody) ? Object.entries(validBody).filter(([k]) => k !== key).map(([k, v]) => `${JSON.stringify(k)}:${toJsonText(v)},`).join('') : '';
        for (const [what, nested] of [['objects', deeplyNested(10_000)], ['arrays', deeplyNested(10_000, '[', ']', '')]] as const) {
          const text = `{${others}${JSON.stringify(key)}:${nested}}`;
          add(`10,000-deep nested ${what} in ${key}`, { payload: text, mustReject: verdict(text) });
        }
        const dupFirst = `{${others}${JSON.stringify(key)}:${toJsonText(fc.sample(breakingValue(schema as JsonSchema), { seed: 3, numRuns: 1 })[0])},${JSON.stringify(key)}:${toJsonText(isRecord(validBody) ? validBody[key] ?? null : null)}}`;
        add(`duplicate key ${key}`, { payload: dupFirst, mustReject: verdict(dupFirst) });
        for (const raw of ['9007199254740993', '1e309', '-1e309', '-0', '1e-400']) {
          const text = `{${others}${JSON.stringify(key)}:${raw}}`;
          add(`${key} = ${raw}`, { payload: text, mustReject: verdict(text) });
        }
      }
    }
  } else {
    add('2 MB body on a GET', { payload: JSON.stringify({ body: 'x'.repeat(TWO_MB) }) });
  }

  for (const p of pathParams) {
    for (const raw of ['..%2f..%2f..%2fetc%2fpasswd', '%2e%2e%2f%2e%2e%2f', '..', '%2e', '%FF%FE', '%C0%AF', '%', '%00', 'a'.repeat(201), '9007199254740993', '1e309', '-0',
      percentEncode("' OR 1=1 --"), percentEncode('$.a[*]'), percentEncode('{"$gt":""}'), percentEncode('\ud800')]) {
      add(`path ${p.name} = ${raw.slice(0, 40)}`, { url: pathOf({ [p.name]: raw }), payload: operation.method === 'GET' ? undefined : bodyText, expectStatus: raw.length > 200 ? [414] : undefined });
    }
  }
  const queryParams = operation.parameters.filter((p) => p.location === 'query');
  for (const p of queryParams) {
    for (const raw of ['%FF', '%C0%AF', '%', '%00', '9007199254740993', '1e309', '-0', 'x'.repeat(100_000), percentEncode("' OR 1=1 --"), percentEncode('$.a[*]'), percentEncode('{"$gt":""}')]) {
      add(`query ${p.name} = ${raw.slice(0, 40)}`, { url: `${pathOf()}?${p.name}=${raw}`, payload: operation.method === 'GET' ? undefined : bodyText });
    }
  }
  const payload = operation.method === 'GET' ? undefined : bodyText;
  add('20 kB header value', { headers: { 'x-fuzz': 'a'.repeat(20_000) }, payload, mustReject: verdict(bodyText) });
  add('20 kB Authorization', { headers: { authorization: `Bearer ${'a'.repeat(20_000)}` }, payload, mustReject: operation.needsCredential ? 'a 20 kB garbage credential' : undefined });
  add('1,000 query parameters', { url: `${pathOf()}?${Array.from({ length: 1000 }, (_, i) => `p${i}=${i}`).join('&')}`, payload });
  for (const method of ['OPTIONS', 'PROPFIND', 'TRACE']) add(`method ${method}`, { method, payload: undefined });
  return out;
}

/** Requests for routes that do not exist, made of traversal sequences. */
export function strayRequests(fixtures: FuzzFixtures): FuzzRequest[] {
  const urls = [
    '/api/v1/../../etc/passwd', '/api/v1/%2e%2e/%2e%2e/etc/passwd', '/api/v1/embed/dashboard/', '/api/v1/embed/dashboard//comments', '/api/v2/openapi.json',
    '/API/V1/EMBED/USERS', '/api/v1/embed/users/', '/embed/assets/..%2f..%2f..%2fpackage.json', '/embed/assets/%2e%2e/%2e%2e/package.json', '/%00', '/%FF',
  ];
  return urls.map((url) => ({ operation: 'stray routes', label: `nasty: ${url}`, method: 'GET', url, headers: fixtures.credentials.admin!, credential: 'admin' }));
}

/**
 * Requests as raw bytes for a real socket, for what inject would normalise or refuse to send: invalid UTF-8 in the
 * request line and headers, 20 kB headers and URLs, malformed request lines, smuggling-shaped framing, a
 * Content-Length past the body limit.
 */
export function rawRequests(fixtures: FuzzFixtures): FuzzRequest[] {
  const admin = `Authorization: ${fixtures.credentials.admin!.authorization}`;
  const embed = `Authorization: ${fixtures.credentials.embed!.authorization}`;
  const publicId = String(fixtures.hints.publicId?.[0]);
  const deploymentId = String(fixtures.hints.deploymentId?.[0]);
  const request = (line: string, headers: string[], body: Buffer | string = '') =>
    Buffer.concat([Buffer.from(`${line}\r\n${['Host: 127.0.0.1', 'Connection: close', ...headers].join('\r\n')}\r\n\r\n`, 'latin1'), Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8')]);
  const cases: Array<[string, Buffer, Partial<FuzzRequest>]> = [
    ['invalid UTF-8 bytes in the path', request(`GET /api/v1/embed/dashboard/\xff\xfe${publicId}/comments HTTP/1.1`, [embed]), { mustReject: 'invalid bytes in the URL' }],
    ['overlong UTF-8 in the query', request(`GET /api/v1/deployments/${deploymentId}/workspace?search=\xc0\xaf HTTP/1.1`, [admin]), {}],
    ['percent-encoded invalid UTF-8 in the path', request(`GET /api/v1/embed/dashboard/%FF%FE/comments HTTP/1.1`, [embed]), { mustReject: 'invalid percent-encoding' }],
    ['invalid UTF-8 in the Authorization header', request('GET /api/v1/embed/users HTTP/1.1', ['Authorization: Bearer \xff\xfe\xc0\xaf']), { mustReject: 'a garbage credential' }],
    ['20 kB header value', request('GET /api/v1/embed/users HTTP/1.1', [admin, `X-Fuzz: ${'a'.repeat(20_000)}`]), { expectStatus: [431] }],
    ['20 kB Authorization', request('GET /api/v1/embed/users HTTP/1.1', [`Authorization: Bearer ${'a'.repeat(20_000)}`]), { expectStatus: [431] }],
    ['20 kB URL', request(`GET /api/v1/deployments/${deploymentId}/workspace?search=${'a'.repeat(20_000)} HTTP/1.1`, [admin]), { expectStatus: [414, 431] }],
    ['malformed request line', Buffer.from('GARBAGE\r\n\r\n'), { mustReject: 'not HTTP' }],
    ['NUL in a header value', request('GET /api/v1/embed/users HTTP/1.1', [admin, 'X-Fuzz: a\x00b']), { mustReject: 'a NUL in a header' }],
    ['a header name with a space', request('GET /api/v1/embed/users HTTP/1.1', [admin, 'X Fuzz: 1']), { mustReject: 'a malformed header' }],
    ['Content-Length and Transfer-Encoding both', request(`POST /api/v1/embed/dashboard/${publicId}/comments HTTP/1.1`, [embed, 'Content-Type: application/json', 'Content-Length: 5', 'Transfer-Encoding: chunked'], '0\r\n\r\n'), { mustReject: 'smuggling-shaped framing' }],
    ['negative Content-Length', request(`POST /api/v1/embed/dashboard/${publicId}/comments HTTP/1.1`, [embed, 'Content-Type: application/json', 'Content-Length: -1']), { mustReject: 'a negative Content-Length' }],
    ['Content-Length past the body limit, no body', request('POST /api/v1/embed/session/token HTTP/1.1', ['Content-Type: application/json', 'Content-Length: 5000000']), { expectStatus: [413] }],
    ['2 MB chunked body', request(`POST /api/v1/embed/dashboard/${publicId}/comments HTTP/1.1`, [embed, 'Content-Type: application/json', 'Transfer-Encoding: chunked'],
      `${(TWO_MB + 12).toString(16)}\r\n{"body":"${'x'.repeat(TWO_MB)}"}\r\n0\r\n\r\n`), { expectStatus: [413] }],
    ['invalid UTF-8 inside a JSON body', request(`POST /api/v1/embed/dashboard/${publicId}/comments HTTP/1.1`, [embed, 'Content-Type: application/json', 'Content-Length: 22'],
      Buffer.concat([Buffer.from('{"body":"'), Buffer.from([0xff, 0xfe, 0xc0, 0xaf, 0xed, 0xa0, 0x80, 0xf8, 0x41, 0x42, 0x43]), Buffer.from('"}')])), {}],
    ['HTTP/1.0 without Host', Buffer.from('GET /api/v1/embed/users HTTP/1.0\r\n\r\n'), { mustReject: 'no credential' }],
    ['absolute-form URL naming another host', request('GET http://evil.test/api/v1/embed/users HTTP/1.1', [admin]), {}],
    ['obs-fold header continuation', request('GET /api/v1/embed/users HTTP/1.1', [admin, 'X-Fuzz: a', ' folded']), {}],
  ];
  return cases.map(([label, raw, extra]) => ({
    operation: 'raw socket', label: `raw: ${label}`, method: raw.subarray(0, raw.indexOf(0x20)).toString('latin1'), url: '(raw)', headers: {}, credential: '(in the bytes)', raw, ...extra,
  }));
}
