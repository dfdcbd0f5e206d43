import { AjvCompiler } from '@fastify/ajv-compiler';
import type { FastifyServerOptions } from 'fastify';

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
  return (route: Parameters<CompileForRoute>[0]) => (route.httpPart === 'body' ? asSent : converting)(route);
}) as unknown as BuildValidator;
