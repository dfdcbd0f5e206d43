import { describe, expect, it } from 'vitest';
import { ACTION_TYPES, CORE_EVENT_RULES, EVENT_RULES, EVENT_TYPES, EXPLORE_EVENT_RULES, SOURCE, createAction, createEvent, isCoreEvent, isEvent, isExploreEvent, parseAction, parseEvent, parseMessage } from './index.js';
import type { ActionPayloads, EventPayloads } from './index.js';

/** One valid payload per catalogue entry; the mapped types make a new catalogue entry without a sample a compile error. */
const EVENT_SAMPLES: { [K in keyof EventPayloads]: EventPayloads[K] } = {
  'svc:event:ready': { embedTenant: 'customer-a', deploymentId: 7, mode: 'signed', surface: 'dashboard', publicId: 'q1' },
  'svc:event:view': { surface: 'dashboard', path: '/embed/d/7/app/workbook/3', publicId: 'q1', title: 'Q1' },
  'svc:event:navigate': { path: '/b', previousPath: '/a' },
  'svc:event:dashboard-loaded': { publicId: 'q1', widgetCount: 4, loadDurationMs: 812 },
  'svc:event:download': { format: 'csv', target: 'widget', widgetId: 'w1', title: 'Pipeline', rowCount: 120 },
  'svc:event:drilldown': { member: 'orders.count', value: 42, widgetId: 'w1' },
  'svc:event:ai-query': { query: 'revenue by month', status: 'submitted', chatId: 'c1' },
  'svc:event:session-expiring': { expiresAt: 1_800_000_000_000, expiresInMs: 1_800_000 },
  'svc:event:session-expired': { expiredAt: 1_800_000_000_000 },
  'svc:event:error': { message: 'session id refused', name: 'EmbedSessionExchangeError', context: 'session-renewal', fatal: false },
  'svc:event:action-result': { requestId: 'r1', action: 'svc:action:set-session', ok: true },
  'svc:event:content-size': { height: 2167, width: 1046 },
  'svc:event:comment': { kind: 'reply-created', publicId: 'q1', threadId: 4, commentId: 9, mentionedExternalIds: ['ben@customer-a'] },
  'svc:event:chart-saved': { chartId: 'ch_1', title: 'Revenue by category', visibility: 'tenant' },
  'svc:event:view-saved': { viewId: 'vw_1', name: 'Europe, by week', visibility: 'private', publicId: 'q1' },
};

const ACTION_SAMPLES: { [K in keyof ActionPayloads]: ActionPayloads[K] } = {
  'svc:action:set-color-scheme': { scheme: 'dark' },
  'svc:action:set-theme': { primaryColor: '#2255ff', borderRadius: 8, font: 'Inter', cardShadow: 'none' },
  'svc:action:set-locale': { locale: 'pt-BR' },
  'svc:action:set-timezone': { timezone: 'Europe/Lisbon' },
  'svc:action:set-filter': { filterUrlParameter: 'f_orders.status=["completed"]' },
  'svc:action:navigate': { path: '/embed/d/7/app/workbook/3' },
  'svc:action:refresh': {},
  'svc:action:set-session': { sessionId: 'ses_abc' },
  'svc:action:explore': { widgetId: 'trend' },
};

describe('@svc/protocol guards (SPEC "Events")', () => {
  it.each(EVENT_TYPES)('accepts %s with a catalogue payload, on every surface', (type) => {
    for (const surface of ['dashboard', 'app', 'chat'] as const) {
      const message = createEvent(type, EVENT_SAMPLES[type] as never, surface, 1000);
      const parsed = parseEvent(JSON.parse(JSON.stringify(message)));
      expect(parsed).toEqual({ ok: true, message });
      expect(isEvent(JSON.parse(JSON.stringify(message)))).toBe(true);
    }
  });

  it.each(ACTION_TYPES)('accepts %s with a catalogue payload', (type) => {
    const message = createAction(type, ACTION_SAMPLES[type] as never, 'req-1', 1000);
    expect(parseAction(structuredClone(message))).toEqual({ ok: true, message });
    expect(message).not.toHaveProperty('surface');
  });

  it('stamps source, direction, timestamp and (events only) surface', () => {
    expect(createEvent('svc:event:navigate', { path: '/a' }, 'app', 5)).toEqual({ source: SOURCE, direction: 'event', type: 'svc:event:navigate', payload: { path: '/a' }, timestamp: 5, surface: 'app' });
    expect(createAction('svc:action:refresh', {}, undefined, 5)).toEqual({ source: 'svc-embed', direction: 'action', type: 'svc:action:refresh', payload: {}, timestamp: 5 });
  });

  const event = createEvent('svc:event:download', { format: 'csv', target: 'dashboard' }, 'dashboard', 1);
  it.each([
    [null, 'not an object'],
    ['svc:event:ready', 'not an object'],
    [[event], 'not an object'],
    [{ ...event, source: 'svc-embed ' }, 'bad source'],
    [{ ...event, direction: 'Event' }, 'bad direction'],
    [{ ...event, type: 7 }, 'bad type'],
    [{ ...event, type: 'svc:event:nope' }, 'unknown event type svc:event:nope'],
    [{ ...event, type: 'toString' }, 'unknown event type toString'],
    [{ ...event, type: 'svc:action:refresh' }, 'unknown event type svc:action:refresh'],
    [{ ...event, timestamp: '1' }, 'bad timestamp'],
    [{ ...event, timestamp: Number.NaN }, 'bad timestamp'],
    [{ ...event, surface: undefined }, 'bad surface'],
    [{ ...event, surface: 'report' }, 'bad surface'],
    [{ ...event, payload: 'csv' }, 'bad payload'],
    [{ ...event, payload: { target: 'dashboard' } }, 'svc:event:download: payload.format is missing'],
    [{ ...event, payload: { format: 'docx', target: 'dashboard' } }, 'svc:event:download: payload.format must be one of csv, xlsx, png, pdf'],
    [{ ...event, payload: { format: 'csv', target: 'dashboard', rowCount: '12' } }, 'svc:event:download: payload.rowCount must be a number'],
    [{ ...event, payload: { format: 'csv', target: 'dashboard', rowCount: Infinity } }, 'svc:event:download: payload.rowCount must be a number'],
    [{ ...createEvent('svc:event:ready', EVENT_SAMPLES['svc:event:ready'], 'dashboard'), payload: { ...EVENT_SAMPLES['svc:event:ready'], embedTenant: undefined } }, 'svc:event:ready: payload.embedTenant is missing'],
    [{ ...createEvent('svc:event:navigate', { path: '/' }, 'chat'), payload: { path: null } }, 'svc:event:navigate: payload.path must not be null'],
    [{ ...createEvent('svc:event:comment', EVENT_SAMPLES['svc:event:comment'], 'dashboard'), payload: { ...EVENT_SAMPLES['svc:event:comment'], mentionedExternalIds: 'ben' } }, 'svc:event:comment: payload.mentionedExternalIds must be a list of strings'],
    [{ ...createEvent('svc:event:comment', EVENT_SAMPLES['svc:event:comment'], 'dashboard'), payload: { ...EVENT_SAMPLES['svc:event:comment'], mentionedExternalIds: ['ben', 7] } }, 'svc:event:comment: payload.mentionedExternalIds must be a list of strings'],
    [{ ...createEvent('svc:event:comment', EVENT_SAMPLES['svc:event:comment'], 'dashboard'), payload: { ...EVENT_SAMPLES['svc:event:comment'], kind: 'thread-deleted' } }, 'svc:event:comment: payload.kind must be one of thread-created, reply-created'],
    [{ ...createAction('svc:action:refresh', {}), surface: 'dashboard' }, 'bad surface'],
    [{ ...createAction('svc:action:set-session', { sessionId: 'x' }), requestId: 3 }, 'bad requestId'],
    [{ ...createAction('svc:action:set-color-scheme', { scheme: 'light' }), payload: { scheme: 'sepia' } }, 'svc:action:set-color-scheme: payload.scheme must be one of light, dark, auto'],
    [{ ...createEvent('svc:event:chart-saved', EVENT_SAMPLES['svc:event:chart-saved'], 'dashboard'), payload: { ...EVENT_SAMPLES['svc:event:chart-saved'], visibility: 'public' } }, 'svc:event:chart-saved: payload.visibility must be one of private, tenant'],
    [{ ...createEvent('svc:event:view-saved', EVENT_SAMPLES['svc:event:view-saved'], 'dashboard'), payload: { viewId: 'vw_1', name: 'x', visibility: 'tenant' } }, 'svc:event:view-saved: payload.publicId is missing'],
    [{ ...createAction('svc:action:explore', {}), payload: { widgetId: 7 } }, 'svc:action:explore: payload.widgetId must be a string'],
  ])('rejects %j: %s', (data, reason) => {
    expect(parseMessage(data)).toEqual({ ok: false, reason });
    // The SDK's receive path asks only whether (isEvent): the same checks, without the words.
    expect(isEvent(data)).toBe(false);
  });

  it('guards exploration\'s events in a table of their own (issue 35): isCoreEvent, what the SDK\'s main entry asks, knows none of them', () => {
    const saved = JSON.parse(JSON.stringify(createEvent('svc:event:chart-saved', EVENT_SAMPLES['svc:event:chart-saved'], 'dashboard'))) as unknown;
    const ready = JSON.parse(JSON.stringify(createEvent('svc:event:ready', EVENT_SAMPLES['svc:event:ready'], 'dashboard'))) as unknown;
    expect([isEvent(saved), isExploreEvent(saved), isCoreEvent(saved)]).toEqual([true, true, false]);
    expect([isEvent(ready), isExploreEvent(ready), isCoreEvent(ready)]).toEqual([true, false, true]);
    expect(Object.keys(EVENT_RULES)).toEqual([...Object.keys(CORE_EVENT_RULES), ...Object.keys(EXPLORE_EVENT_RULES)]);
  });

  it('tells events from actions for each side', () => {
    expect(parseEvent(createAction('svc:action:refresh', {}))).toEqual({ ok: false, reason: 'not an event' });
    expect(parseAction(event)).toEqual({ ok: false, reason: 'not an action' });
  });

  it('lets a payload carry fields beyond the catalogue (a newer peer)', () => {
    expect(parseEvent({ ...event, payload: { format: 'png', target: 'widget', widgetId: 'w', dpi: 2 } }).ok).toBe(true);
  });
});
