import { AjvCompiler } from '@fastify/ajv-compiler';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import { AppError } from '../core/core.errors.js';

type BuildValidator = NonNullable<NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildValidator']>;
/** What the pool builds at run time (its published type says otherwise): a compiler of one route part's schema. */
type CompileForRoute = (route: { schema: unknown; method: string; url: string; httpPart: string }) => unknown;
type PoolOptions = Parameters<ReturnType<typeof AjvCompiler>>[1];

/**
 * Fastify's validator factory with one difference: JSON bodies are validated as sent, never converted. Query
 * strings and path parameters arrive as text and are still converted to the schema's types (`first=20` is a
 * number), but a body field of the wrong JSON type is a 400 naming it: `{"resolved": null}` must not re-open a
 * thread, `{"body": 12345}` must not post the comment "12345".
 *
 * @example
 * Fastify({ schemaController: { compilersFactory: { buildValidator: buildStrictBodyValidator } } });
 */
export const buildStrictBodyValidator = ((externalSchemas: Record<string, never>, options: PoolOptions & { customOptions?: object }) => {
  const converting = AjvCompiler()(externalSchemas, options) as unknown as CompileForRoute;
  const asSent = AjvCompiler()(externalSchemas, { ...options, customOptions: { ...options?.customOptions, coerceTypes: false } } as PoolOptions) as unknown as CompileForRoute;
  return (route: Parameters<CompileForRoute>[0]) => (route.httpPart === 'body'
    ? asSent(route)
    : canonicalAndFinite(converting(route) as AjvValidate, integerNames(route.schema)));
}) as unknown as BuildValidator;

type AjvValidate = ((data: unknown, context?: unknown) => boolean) & { errors?: unknown[] | null; schemaEnv?: unknown };

/** An integer written in decimal as a person writes it: no sign but `-`, no leading zero, space, exponent or `0x`. */
const CANONICAL_INTEGER = /^(?:0|-?[1-9][0-9]*)$/;

/** The names of a route part's parameters whose schema is an integer (or a list of integers). */
function integerNames(schema: unknown): string[] {
  const properties = (schema as { properties?: Record<string, { type?: unknown; items?: { type?: unknown } }> } | undefined)?.properties ?? {};
  return Object.entries(properties).filter(([, property]) => property.type === 'integer' || property.items?.type === 'integer').map(([name]) => name);
}

/**
 * The converted parameters of a route (path and query string) are checked twice around Ajv's conversion:
 * - before it, an integer parameter must be written canonically: Ajv turns `0x180`, `385e0`, `+387`, ` 386` and
 *   `0388` into numbers, so five spellings addressed one comment (and a cache keyed by the text would see five);
 * - after it, no parameter may be infinite: Ajv converts `1e309` or `Infinity` to a number that passes
 *   `type: integer` and skips `minimum`/`maximum` (they only compare finite numbers).
 * Either failure is Ajv's kind of error, so the error handler names the parameter as it does any other.
 */
function canonicalAndFinite(validate: AjvValidate, integers: string[]): AjvValidate {
  const wrapped: AjvValidate = (data, context) => {
    const loose = looseIntegerName(data, integers);
    if (loose !== undefined) {
      wrapped.errors = [{ instancePath: `/${loose}`, keyword: 'type', message: 'must be a decimal integer (digits only, no leading zero)', params: {} }];
      return false;
    }
    if (!validate(data, context)) {
      wrapped.errors = validate.errors;
      return false;
    }
    const name = nonFiniteName(data);
    wrapped.errors = name === undefined ? null : [{ instancePath: `/${name}`, keyword: 'type', message: 'must be a finite integer', params: {} }];
    return name === undefined;
  };
  // Fastify passes the parent (so that Ajv may convert a root value) only to validators that carry schemaEnv.
  wrapped.schemaEnv = validate.schemaEnv;
  return wrapped;
}

function looseIntegerName(data: unknown, integers: string[]): string | undefined {
  if (integers.length === 0 || data === null || typeof data !== 'object') return undefined;
  const isLoose = (v: unknown) => typeof v === 'string' && !CANONICAL_INTEGER.test(v);
  for (const name of integers) {
    const value = (data as Record<string, unknown>)[name];
    if (Array.isArray(value) ? value.some(isLoose) : isLoose(value)) return name;
  }
  return undefined;
}

const isNonFinite = (v: unknown) => typeof v === 'number' && !Number.isFinite(v);

// Runs on every request's parameters: a loop over the keys, no arrays made.
function nonFiniteName(data: unknown): string | undefined {
  if (data === null || typeof data !== 'object') return undefined;
  for (const name in data) {
    const value = (data as Record<string, unknown>)[name];
    if (Array.isArray(value) ? value.some(isNonFinite) : isNonFinite(value)) return name;
  }
  return undefined;
}

/** How deep a JSON body may nest (objects and arrays); the deepest body svc defines is 6 levels. */
export const MAX_JSON_DEPTH = 32;

/** Decodes UTF-8 and throws on a byte sequence that is not UTF-8, instead of writing U+FFFD in its place. */
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The JSON body parser: the bytes must be UTF-8 (RFC 8259 section 8.1; a lenient decoder would store a comment's
 * bytes as U+FFFD and merge the externalIds `coll\xff` and `coll\xfe` into one embed user), then Fastify's own
 * parser (prototype poisoning refused), then one walk over the parsed value that refuses, with a 400 naming the
 * field, nesting deeper than MAX_JSON_DEPTH (serializing such a value again would overflow the stack) and U+0000 in
 * any string or key (PostgreSQL cannot store it; no svc field needs it).
 */
export function registerJsonBodyParser(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'ignore');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, bytes, done) => {
    let body: string;
    try {
      body = strictUtf8.decode(bytes as Buffer);
    } catch {
      return done(new AppError('invalid_body', 'request body is not valid UTF-8; send JSON encoded as UTF-8'), undefined);
    }
    parse(request, body, (error: Error | null, value?: unknown) => {
      if (error !== null) return done(error, undefined);
      const problem = inspectJson(value);
      if (problem === undefined) return done(null, value);
      return done(new AppError('invalid_body', `body${problem.path === '' ? '' : ` field ${problem.path}`} ${problem.reason}`, problem.path === '' ? undefined : problem.path), undefined);
    });
  });
}

/** The first place where a parsed JSON value breaks the rules of registerJsonBodyParser (iterative: no recursion). */
export function inspectJson(value: unknown): { path: string; reason: string } | undefined {
  const stack: Array<{ value: unknown; path: string[]; depth: number }> = [{ value, path: [], depth: 0 }];
  const at = (path: string[]) => path.slice(0, 4).join('.') + (path.length > 4 ? '...' : '');
  while (stack.length > 0) {
    const { value: current, path, depth } = stack.pop()!;
    if (typeof current === 'string') {
      if (current.includes('\u0000')) return { path: at(path), reason: 'contains the NUL character (U+0000), which cannot be stored' };
      continue;
    }
    if (current === null || typeof current !== 'object') continue;
    if (depth >= MAX_JSON_DEPTH) return { path: at(path), reason: `is nested deeper than ${MAX_JSON_DEPTH} levels` };
    for (const [key, child] of Object.entries(current)) {
      if (key.includes('\u0000')) return { path: at(path), reason: 'has a key containing the NUL character (U+0000)' };
      stack.push({ value: child, path: [...path, key], depth: depth + 1 });
    }
  }
  return undefined;
}
