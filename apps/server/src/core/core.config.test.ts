import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { main } from '../cli.js';
import { SETTINGS, describeSettingsAsMarkdown, loadConfig, readSetting } from './core.config.js';
import type { SettingName } from './core.config.js';

const SRC = fileURLToPath(new URL('../', import.meta.url));
const OPERATIONS = fileURLToPath(new URL('../../../../docs/operations.md', import.meta.url));
const NAMES = Object.keys(SETTINGS.properties) as SettingName[];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.test.ts') ? [path] : [];
  });
}

/** Issue 19 "One typed configuration": one schema of every SVC_* variable, read in one place, documented from it. */
describe('configuration', () => {
  it('the schema names every SVC_ variable the server source mentions', () => {
    const mentioned = new Set(sourceFiles(SRC).flatMap((file) => readFileSync(file, 'utf8').match(/\bSVC_[A-Z][A-Z0-9_]*[A-Z0-9]\b/g) ?? []));
    const unknown = [...mentioned].filter((name) => !NAMES.includes(name as SettingName) && name !== 'SVC_RATE_LIMIT');
    expect(unknown).toEqual([]);
  });

  it('docs/operations.md carries the table written from the schema, row for row', () => {
    expect(readFileSync(OPERATIONS, 'utf8')).toContain(describeSettingsAsMarkdown());
  });

  it('svc serve --help lists every variable with its default', async () => {
    let printed = '';
    const write = process.stdout.write.bind(process.stdout);
    process.stdout.write = ((chunk: string) => { printed += chunk; return true; }) as typeof process.stdout.write;
    try {
      expect(await main(['serve', '--help'])).toBe(0);
    } finally {
      process.stdout.write = write;
    }
    for (const name of NAMES) expect(printed).toContain(`  ${name} (default: `);
    expect(printed).toContain('SVC_PORT (default: 3000)');
  });

  it('an unset or empty variable takes its default', () => {
    const config = loadConfig({ SVC_PORT: '', SVC_AI_MODEL: '' });
    expect(config.port).toBe(3000);
    expect(config.ai.model).toBe('gpt-4o-mini');
    expect(config.metricsToken).toBeUndefined();
    expect(config.listingCacheBytes).toBe(32 * 1024 * 1024);
    expect(config.embedSourceMaps).toBe(false);
    expect(config.rateLimitStore).toEqual({ redisUrl: undefined, redisPrefix: 'svc:rate-limit:' });
    expect(config.webhooks.retentionMs).toBe(30 * 86_400_000);
    expect(loadConfig({ SVC_WEBHOOK_RETENTION_MS: '3600000' }).webhooks.retentionMs).toBe(3_600_000);
    expect(config.encryptionKeys).toEqual([]);
    expect(loadConfig({ SVC_ENCRYPTION_KEY: ` ${'a'.repeat(32)} , ${'b'.repeat(40)}` }).encryptionKeys).toEqual(['a'.repeat(32), 'b'.repeat(40)]);
  });

  it('never repeats an encryption key in its error', () => {
    expect(() => loadConfig({ SVC_ENCRYPTION_KEY: 'secret-but-short' })).toThrow(expect.objectContaining({ message: expect.not.stringContaining('secret-but-short') }));
  });

  it('reads each type strictly: whole numbers, numbers, booleans, one of a list', () => {
    const config = loadConfig({ SVC_PORT: '0', SVC_LISTING_CACHE_MB: '0.5', SVC_EMBED_SOURCE_MAPS: 'true', SVC_LOG_LEVEL: 'warn', SVC_TRUST_PROXY: '10.0.0.0/8, 127.0.0.1' });
    expect(config.port).toBe(0);
    expect(config.listingCacheBytes).toBe(524_288);
    expect(config.embedSourceMaps).toBe(true);
    expect(config.logLevel).toBe('warn');
    expect(config.trustProxy).toBe('10.0.0.0/8,127.0.0.1');
  });

  it.each([
    ['SVC_PORT', '0x10', /SVC_PORT must be a whole number >= 0 and <= 65535, got "0x10"/],
    ['SVC_PORT', '65536', /SVC_PORT must be a whole number/],
    ['SVC_DATA_ROW_CAP', '1e3', /SVC_DATA_ROW_CAP must be a whole number >= 1, got "1e3"/],
    ['SVC_LISTING_CACHE_MB', '-1', /SVC_LISTING_CACHE_MB must be a number >= 0/],
    ['SVC_EMBED_SOURCE_MAPS', 'yes', /SVC_EMBED_SOURCE_MAPS must be `true` or `false`/],
    ['SVC_LOG_LEVEL', 'loud', /SVC_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent/],
    ['SVC_TRUST_PROXY', 'loadbalancer.internal', /SVC_TRUST_PROXY .*"loadbalancer.internal"/],
    ['SVC_WEBHOOK_RETENTION_MS', '30d', /SVC_WEBHOOK_RETENTION_MS must be a whole number >= 1000 and <= 315360000000, got "30d"/],
    ['SVC_WEBHOOK_RETENTION_MS', '999', /SVC_WEBHOOK_RETENTION_MS must be a whole number >= 1000/],
    ['SVC_WEBHOOK_RETENTION_MS', '315360000001', /SVC_WEBHOOK_RETENTION_MS must be .*<= 315360000000, got "315360000001"/],
    ['SVC_ENCRYPTION_KEY', 'too-short-a-key', /SVC_ENCRYPTION_KEY must be keys of at least 32 bytes each .*; key 1 is shorter$/],
    ['SVC_ENCRYPTION_KEY', `${'k'.repeat(32)},short`, /key 2 is shorter$/],
    ['SVC_ENCRYPTION_KEY', '', /^SVC_ENCRYPTION_KEY is set but holds no key \(""\); give keys .* or unset it/],
    ['SVC_ENCRYPTION_KEY', '   ', /^SVC_ENCRYPTION_KEY is set but holds no key/],
    ['SVC_ENCRYPTION_KEY', ' , ,', /^SVC_ENCRYPTION_KEY is set but holds no key/],
    ['SVC_ENCRYPTION_KEY', '\n', /^SVC_ENCRYPTION_KEY is set but holds no key/],
  ])('refuses %s=%j, naming the variable and what it must be', (name, value, message) => {
    expect(() => loadConfig({ [name]: value })).toThrow(message);
    expect(() => readSetting(name as SettingName, { [name]: value })).toThrow(message);
  });
});
