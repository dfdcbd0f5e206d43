import { AjvCompiler } from '@fastify/ajv-compiler';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import { AppError } from './http.errors.js';

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
  return (route: Parameters<CompileForRoute>[0]) => (route.httpPart === 'body' ? asSent(route) : finiteOnly(converting(route) as AjvValidate));
}) as unknown as BuildValidator;

type AjvValidate = ((data: unknown, context?: unknown) => boolean) & { errors?: unknown[] | null; schemaEnv?: unknown };

/**
 * Ajv converts `1e309` or `Infinity` in a query string or path to a number that passes `type: integer` and skips
 * `minimum`/`maximum` (they only compare finite numbers). The converted parameters of a route are refused here
 * when one of them (or an item of a repeated one) is not finite.
 */
function finiteOnly(validate: AjvValidate): AjvValidate {
  const wrapped: AjvValidate = (data, context) => {
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

function nonFiniteName(data: unknown): string | undefined {
  if (data === null || typeof data !== 'object') return undefined;
  for (const [name, value] of Object.entries(data)) {
    const values: unknown[] = Array.isArray(value) ? value : [value];
    if (values.some((v) => typeof v === 'number' && !Number.isFinite(v))) return name;
  }
  return undefined;
}

/** How deep a JSON body may nest (objects and arrays); the deepest body svc defines is 6 levels. */
export const MAX_JSON_DEPTH = 32;

/**
 * The JSON body parser: Fastify's own (prototype poisoning refused), then one walk over the parsed value that
 * refuses, with a 400 naming the field, nesting deeper than MAX_JSON_DEPTH (serializing such a value again would
 * overflow the stack) and U+0000 in any string or key (PostgreSQL cannot store it; no svc field needs it).
 */
export function registerJsonBodyParser(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'ignore');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    parse(request, body as string, (error: Error | null, value?: unknown) => {
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
