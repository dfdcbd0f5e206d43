import { loadConfig } from '../src/core/core.config.js';
import type { Config } from '../src/core/core.config.js';

/** A Config with some of its groups given in part (`rateLimits: { login: 2 }`); a group given is merged into the loaded one. */
export type ConfigOverrides = {
  [K in keyof Config]?: Config[K] extends ReadonlyArray<infer E> ? readonly E[] : Config[K] extends object ? Partial<Config[K]> : Config[K];
};

/**
 * The Config a test's app runs with: the environment's, as `svc serve` loads it, but with the background work only
 * `svc serve` does switched off (webhook delivery, pre-aggregation builds: a test starts its own dispatcher or
 * builder when it wants one), and `overrides` on top, each group merged one level deep.
 *
 * @example
 * const app = await buildApp(testConfig({ rateLimits: { generateSession: 3 } }), { db });
 */
export function testConfig(overrides: ConfigOverrides = {}): Config {
  const loaded = loadConfig();
  const config: Config = { ...loaded, webhooks: { ...loaded.webhooks, deliver: false }, data: { ...loaded.data, preAggregationRefresh: false } };
  for (const [name, value] of Object.entries(overrides) as Array<[keyof Config, unknown]>) {
    const base = config[name];
    const merged = isGroup(base) && isGroup(value) ? { ...base, ...value } : Array.isArray(value) ? [...value] : value;
    (config as unknown as Record<string, unknown>)[name] = merged;
  }
  return config;
}

/** A group of settings (`rateLimits`, `webhooks`...): an object, not a list. */
function isGroup(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
