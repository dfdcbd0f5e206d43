import { describe, expect, it } from 'vitest';
import { embedUrl } from './embed.js';

describe('embedUrl', () => {
  const base = { baseUrl: 'https://analytics.example.com/', surface: 'dashboard', publicId: 'sales-performance' } as const;

  it('passes the comments option as the embed URL parameter the embed reads (how the comment panel starts)', () => {
    for (const comments of ['open', 'collapsed', 'auto'] as const) {
      expect(new URL(embedUrl({ ...base, comments }, 'ses_1')).searchParams.get('comments')).toBe(comments);
    }
  });

  it('leaves comments out when the host does not choose, so that the embed applies its default (auto)', () => {
    expect(embedUrl(base, 'ses_1')).toBe('https://analytics.example.com/embed/dashboard/sales-performance?session=ses_1');
  });
});
