import { describe, expect, it } from 'vitest';
import { parseColorScheme, parseFilter, parseLocale, parseTimezone } from './preferences.js';
import { normalizePath, parseRoute } from './page.js';
import { languageOf, translator } from './i18n.js';

describe('set-timezone values (SPEC: IANA names; bare UTC offsets are ignored)', () => {
  it('accepts IANA names, in Intl spelling', () => {
    expect(parseTimezone('Europe/Berlin')).toBe('Europe/Berlin');
    expect(parseTimezone('europe/berlin')).toBe('Europe/Berlin');
    expect(parseTimezone('UTC')).toBe('UTC');
    expect(parseTimezone('Etc/GMT+2')).toBe('Etc/GMT+2');
  });

  it('ignores bare offsets, however they are written, and unknown names', () => {
    for (const offset of ['+02:00', '-0500', '+2', 'UTC+2', 'GMT-03:30', 'utc +01:00']) expect(parseTimezone(offset), offset).toBeUndefined();
    for (const bad of ['', '   ', 'Mars/Olympus', 'Europe/Berlin; drop', null, undefined]) expect(parseTimezone(bad), String(bad)).toBeUndefined();
  });
});

describe('set-locale values (SPEC: full code, short code or regional variant)', () => {
  it('canonicalises full, short and regional codes', () => {
    expect(parseLocale('de-DE')).toBe('de-DE');
    expect(parseLocale('fr')).toBe('fr');
    expect(parseLocale('pt_br')).toBe('pt-BR');
    expect(parseLocale('en-gb')).toBe('en-GB');
  });

  it('refuses what is not a language tag', () => {
    for (const bad of ['???', '', 'en-', 'de DE', null, undefined]) expect(parseLocale(bad), String(bad)).toBeUndefined();
  });

  it("speaks the locale's language when svc has it, else English, while numbers follow the full locale", () => {
    expect(languageOf('pt-BR')).toBe('pt');
    expect(languageOf('ja-JP')).toBe('en');
    expect(translator('de-DE')('widgets', { count: 1234 })).toBe('1.234 Elemente');
    expect(translator('ja-JP')('widgets', { count: 1234 })).toBe('1,234 widgets');
    // One is singular where the locale says so: English and German 1, French 0 and 1.
    expect(translator('en-US')('widgets', { count: 1 })).toBe('1 widget');
    expect(translator('de-DE')('widgets', { count: 1 })).toBe('1 Element');
    expect(translator('fr-FR')('widgets', { count: 0 })).toBe('0 élément');
    expect(translator('en-US')('widgets', { count: 0 })).toBe('0 widgets');
  });
});

describe('set-filter parameters (SPEC: f_<semantic_view>.<dimension>=<JSON>)', () => {
  it('reads a value, a list and a range', () => {
    expect(parseFilter('f_orders.status="completed"')).toEqual({ ok: true, filter: { view: 'orders', dimension: 'status', value: 'completed' } });
    expect(parseFilter('f_orders.status=["completed","shipped"]')).toEqual({ ok: true, filter: { view: 'orders', dimension: 'status', value: ['completed', 'shipped'] } });
    expect(parseFilter('f_orders.amount={"gte":10,"lte":20}')).toEqual({ ok: true, filter: { view: 'orders', dimension: 'amount', value: { gte: 10, lte: 20 } } });
    expect(parseFilter('f_orders.status=null')).toEqual({ ok: true, filter: { view: 'orders', dimension: 'status', value: null } });
  });

  it('says why a parameter is not a filter', () => {
    expect(parseFilter('orders.status="completed"')).toMatchObject({ ok: false, reason: expect.stringContaining('f_<semantic_view>') });
    expect(parseFilter('f_orders.status=completed')).toMatchObject({ ok: false, reason: expect.stringContaining('not JSON') });
    expect(parseFilter('f_orders.status={"from":1}')).toMatchObject({ ok: false, reason: expect.stringContaining('gte') });
    expect(parseFilter('f_orders.status=[{"a":1}]')).toMatchObject({ ok: false });
    expect(parseFilter('f_orders.status; drop=1')).toMatchObject({ ok: false });
  });
});

describe('colour schemes', () => {
  it('knows light, dark and auto only', () => {
    expect(['light', 'dark', 'auto', 'purple', undefined].map(parseColorScheme)).toEqual(['light', 'dark', 'auto', undefined, undefined]);
  });
});

describe('in-embed paths (SPEC "Embed URL shape")', () => {
  it('routes the dashboard, workbook, chat and app paths, with or without the /embed prefix', () => {
    expect(parseRoute('/embed/dashboard/q1-review')).toEqual({ surface: 'dashboard', kind: 'dashboard', path: '/embed/dashboard/q1-review', publicId: 'q1-review' });
    expect(parseRoute('/dashboard/q1-review/')).toMatchObject({ kind: 'dashboard', path: '/embed/dashboard/q1-review' });
    expect(parseRoute('/embed/d/7/app/workbook/42')).toEqual({ surface: 'dashboard', kind: 'workbook', path: '/embed/d/7/app/workbook/42', deploymentId: 7, workbookId: 42 });
    expect(parseRoute('/embed/chat')).toMatchObject({ surface: 'chat', kind: 'chat' });
    expect(parseRoute('/embed/app/sales/overview')).toMatchObject({ surface: 'app', kind: 'app' });
  });

  it('names nothing for other paths, ids out of range, and drops query and fragment', () => {
    expect(parseRoute('/embed/d/0/app/workbook/42').kind).toBe('not-found');
    expect(parseRoute('/embed/d/7/app/workbook/99999999999').kind).toBe('not-found');
    expect(parseRoute('/embed/elsewhere', 'chat')).toEqual({ surface: 'chat', kind: 'not-found', path: '/embed/elsewhere' });
    expect(normalizePath('/embed/dashboard/x?session=ses_1#top')).toBe('/embed/dashboard/x');
  });
});
