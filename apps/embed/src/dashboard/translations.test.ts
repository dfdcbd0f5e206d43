import { describe, expect, it } from 'vitest';
import type { Dashboard } from '../api.js';
import { fallbackChain, localizeDashboard, translatedText } from './translations.js';

const dashboard = (translations: unknown): Dashboard => ({
  id: 1, publicId: 'company-overview', deploymentId: 1, workbookId: 1, title: 'Company overview', description: 'All customers',
  config: {
    title: 'Company overview',
    widgets: [
      { id: 'revenue', type: 'CHART', position: { x: 0, y: 0, w: 6, h: 4 } },
      { id: 'intro', type: 'TEXT', position: { x: 6, y: 0, w: 6, h: 4 }, config: { markdown: '# Sales' } },
    ],
    translations,
  } as Dashboard['config'],
  reportSnapshots: [],
});

describe('translated content (issue 38)', () => {
  it('falls back subtag by subtag, canonicalising the viewer\'s locale', () => {
    expect(fallbackChain('zh-hant-tw')).toEqual(['zh-Hant-TW', 'zh-Hant', 'zh']);
    expect(fallbackChain('pt-BR')).toEqual(['pt-BR', 'pt']);
    expect(fallbackChain('not a locale!')).toEqual(['not a locale!']);
    const translations = { pt: { title: 'Visão geral' }, 'pt-BR': { description: 'Todos os clientes' } };
    expect(translatedText(translations, 'pt-BR', 'title')).toBe('Visão geral');
    expect(translatedText(translations, 'pt-br', 'description')).toBe('Todos os clientes');
    expect(translatedText(translations, 'pt-PT', 'description')).toBeUndefined();
    expect(translatedText(translations, 'de', 'title')).toBeUndefined();
    // Keys of Object's prototype are no translations.
    expect(translatedText(translations, 'constructor', 'title')).toBeUndefined();
    expect(translatedText({ ja: {} }, 'ja', 'toString')).toBeUndefined();
  });

  it('replaces the title, the description, a CHART\'s heading and a TEXT\'s markdown, and leaves the rest', () => {
    const source = dashboard({ ja: { title: '会社概要', 'widgets.revenue.title': '売上', 'widgets.intro.markdown': '# 販売' } });
    const ja = localizeDashboard(source, 'ja-JP');
    expect(ja.title).toBe('会社概要');
    expect(ja.config.title).toBe('会社概要');
    expect(ja.description).toBe('All customers');
    expect(ja.config.widgets![0]!.config).toEqual({ title: '売上' });
    expect(ja.config.widgets![1]!.config).toEqual({ markdown: '# 販売' });
    // Another locale, and a dashboard without translations: the dashboard's own words, the same object.
    expect(localizeDashboard(source, 'fr')).toEqual(source);
    const plain = dashboard(undefined);
    expect(localizeDashboard(plain, 'ja')).toBe(plain);
  });
});
