/**
 * A positive whole number from the environment variable `name`, or `fallback` when it is unset or empty; anything
 * else stops the start with an error naming the variable.
 *
 * @example
 * const rowCap = positiveFromEnv('SVC_DATA_ROW_CAP', 10_000, process.env);
 */
export function positiveFromEnv(name: string, fallback: number, env: NodeJS.ProcessEnv): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, got ${raw}`);
  return value;
}
