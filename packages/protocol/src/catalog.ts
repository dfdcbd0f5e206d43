/** Where an embed runs (SPEC "Events": the `surface` field). */
export type Surface = 'dashboard' | 'app' | 'chat';
export const SURFACES: readonly Surface[] = ['dashboard', 'app', 'chat'];

/** The brand theme of Generate Session and `svc:action:set-theme`: common fields, plus any further keys. */
export interface EmbedTheme {
  primaryColor?: string;
  borderRadius?: string | number;
  font?: string;
  [key: string]: unknown;
}

/** SPEC "Event payloads" and svc's extensions that the SDK's main entry listens for, keyed by event type. */
export interface CoreEventPayloads {
  'svc:event:ready': { embedTenant: string | null; deploymentId: number | null; mode: 'signed' | 'private'; surface: Surface; publicId?: string };
  'svc:event:view': { surface: Surface; path: string; publicId?: string; title?: string };
  'svc:event:navigate': { path: string; previousPath?: string };
  'svc:event:dashboard-loaded': { publicId?: string; widgetCount?: number; loadDurationMs?: number };
  'svc:event:download': { format: 'csv' | 'xlsx' | 'png' | 'pdf'; target: 'widget' | 'dashboard'; widgetId?: string; title?: string; rowCount?: number };
  'svc:event:drilldown': { member: string; value?: unknown; widgetId?: string };
  'svc:event:ai-query': { query: string; status: 'submitted' | 'completed' | 'error'; chatId?: string; agentId?: string };
  'svc:event:session-expiring': { expiresAt: number; expiresInMs: number };
  'svc:event:session-expired': { expiredAt: number };
  'svc:event:error': { message: string; name?: string; context?: string; fatal?: boolean };
  /**
   * svc's extension (docs/sdk.md): the outcome of an action sent with a `requestId`, so a host can await it
   * (`setSession()` resolves or rejects on it). Not in SPEC's catalogue; hosts that ignore it lose nothing.
   */
  'svc:event:action-result': { requestId: string; action: ActionType; ok: boolean; error?: { name: string; message: string } };
  /**
   * svc's extension (docs/sdk.md "Fitting the iframe to its content"): the height in CSS pixels of what the embed
   * shows, whatever the iframe's own height, sent at `ready` and after every change (at most once a frame). The
   * SDK's `autoResize` sets the iframe's height to it. Not in SPEC's catalogue; hosts that ignore it lose nothing.
   */
  'svc:event:content-size': { height: number; width: number };
  /**
   * svc's extension (docs/embedding.md "svc:event:comment"): the viewer started a thread or replied, through the
   * embed's comment panel. Ids and the mentioned embed users' external ids; the text only when the host asked for
   * it (the SDK's `commentText`). A host's page may show it; its backend hears of every comment by webhook.
   */
  'svc:event:comment': CommentEvent;
}

/**
 * svc's extensions of exploration in the embed (issue 35), guarded like the others, in a table of their own
 * (EXPLORE_EVENT_RULES) so that a bundle that guards only the core events carries none of their rules: the SDK's
 * main entry (its size budget), whose `@svc/embed-sdk/explore` entry listens for these.
 */
export interface ExploreEventPayloads {
  /**
   * svc's extension (docs/explore.md "From the host"): the viewer saved a chart in the embed's builder (Generate
   * Session's settings.explore `create`), private or shared with their company (`tenant`).
   */
  'svc:event:chart-saved': { chartId: string; title: string; visibility: 'private' | 'tenant' };
  /** svc's extension (docs/explore.md): the viewer saved a view of the dashboard `publicId` (its filters, grain and swaps). */
  'svc:event:view-saved': { viewId: string; name: string; visibility: 'private' | 'tenant'; publicId: string };
}

/** Every event of the catalogue: SPEC's, svc's extensions, exploration's. */
export interface EventPayloads extends CoreEventPayloads, ExploreEventPayloads {}

/** `svc:event:comment`: a thread started (`thread-created`) or a reply (`reply-created`) by this frame's viewer. */
export interface CommentEvent {
  kind: 'thread-created' | 'reply-created';
  /** The dashboard the comment is on. */
  publicId: string;
  /** The thread's root comment id (for a new thread, the comment's own id). */
  threadId: number;
  commentId: number;
  /** The external ids (Generate Session's `externalId`) of the embed users the comment @mentions, in their tenant. */
  mentionedExternalIds: string[];
  /** The comment's text: only when the host asked for it (`commentText`). */
  body?: string;
}

/**
 * SPEC `svc:event:ai-query`: a question in plain language, submitted, then completed or failed, with the
 * conversation's id (the chat surface, an app) and the agent's (the dashboard's AI widget).
 */
export type AiQueryEvent = EventPayloads['svc:event:ai-query'];

/** SPEC "Action catalog", keyed by action type. */
export interface ActionPayloads {
  'svc:action:set-color-scheme': { scheme: 'light' | 'dark' | 'auto' };
  'svc:action:set-theme': EmbedTheme;
  'svc:action:set-locale': { locale: string };
  'svc:action:set-timezone': { timezone: string };
  'svc:action:set-filter': { filterUrlParameter: string };
  'svc:action:navigate': { path: string };
  'svc:action:refresh': Record<string, never>;
  'svc:action:set-session': { sessionId: string };
  /**
   * svc's extension (docs/explore.md "From the host"): open the embed's chart builder, blank or from the CHART widget
   * `widgetId`; refused unless the session's settings.explore is `create` and a dashboard is shown.
   */
  'svc:action:explore': { widgetId?: string };
}

export type EventType = keyof EventPayloads;
export type CoreEventType = keyof CoreEventPayloads;
export type ExploreEventType = keyof ExploreEventPayloads;
export type ActionType = keyof ActionPayloads;

/** A field of a payload as the guards check it. */
export interface FieldRule {
  type: 'string' | 'number' | 'boolean' | 'object' | 'strings' | 'any';
  optional?: boolean;
  nullable?: boolean;
  oneOf?: readonly string[];
}

type Rules<T> = { [K in keyof T]-?: Record<string, FieldRule> };

const str: FieldRule = { type: 'string' };
const optStr: FieldRule = { type: 'string', optional: true };
const num: FieldRule = { type: 'number' };
const optNum: FieldRule = { type: 'number', optional: true };
const surface: FieldRule = { type: 'string', oneOf: SURFACES };
const visibility: FieldRule = { type: 'string', oneOf: ['private', 'tenant'] };

/** What every core event payload must carry; further fields are allowed (a newer embed may add some). */
export const CORE_EVENT_RULES: Rules<CoreEventPayloads> = {
  'svc:event:ready': { embedTenant: { type: 'string', nullable: true }, deploymentId: { type: 'number', nullable: true }, mode: { type: 'string', oneOf: ['signed', 'private'] }, surface, publicId: optStr },
  'svc:event:view': { surface, path: str, publicId: optStr, title: optStr },
  'svc:event:navigate': { path: str, previousPath: optStr },
  'svc:event:dashboard-loaded': { publicId: optStr, widgetCount: optNum, loadDurationMs: optNum },
  'svc:event:download': { format: { type: 'string', oneOf: ['csv', 'xlsx', 'png', 'pdf'] }, target: { type: 'string', oneOf: ['widget', 'dashboard'] }, widgetId: optStr, title: optStr, rowCount: optNum },
  'svc:event:drilldown': { member: str, value: { type: 'any', optional: true }, widgetId: optStr },
  'svc:event:ai-query': { query: str, status: { type: 'string', oneOf: ['submitted', 'completed', 'error'] }, chatId: optStr, agentId: optStr },
  'svc:event:session-expiring': { expiresAt: num, expiresInMs: num },
  'svc:event:session-expired': { expiredAt: num },
  'svc:event:error': { message: str, name: optStr, context: optStr, fatal: { type: 'boolean', optional: true } },
  'svc:event:action-result': { requestId: str, action: str, ok: { type: 'boolean' }, error: { type: 'object', optional: true } },
  'svc:event:content-size': { height: num, width: num },
  'svc:event:comment': { kind: { type: 'string', oneOf: ['thread-created', 'reply-created'] }, publicId: str, threadId: num, commentId: num, mentionedExternalIds: { type: 'strings' }, body: optStr },
};

/** What exploration's events must carry (issue 35). */
export const EXPLORE_EVENT_RULES: Rules<ExploreEventPayloads> = {
  'svc:event:chart-saved': { chartId: str, title: str, visibility },
  'svc:event:view-saved': { viewId: str, name: str, visibility, publicId: str },
};

/** Every event's rules (what `parseEvent` and `isEvent` check); a bundle that asks only `isCoreEvent` carries none of exploration's. */
export const EVENT_RULES: Rules<EventPayloads> = /* @__PURE__ */ Object.assign({}, CORE_EVENT_RULES, EXPLORE_EVENT_RULES);

/** What every action payload must carry. */
export const ACTION_RULES: Rules<ActionPayloads> = {
  'svc:action:set-color-scheme': { scheme: { type: 'string', oneOf: ['light', 'dark', 'auto'] } },
  'svc:action:set-theme': { primaryColor: optStr, borderRadius: { type: 'any', optional: true }, font: optStr },
  'svc:action:set-locale': { locale: str },
  'svc:action:set-timezone': { timezone: str },
  'svc:action:set-filter': { filterUrlParameter: str },
  'svc:action:navigate': { path: str },
  'svc:action:refresh': {},
  'svc:action:set-session': { sessionId: str },
  'svc:action:explore': { widgetId: optStr },
};

export const EVENT_TYPES = /* @__PURE__ */ Object.keys(EVENT_RULES) as EventType[];
export const ACTION_TYPES = /* @__PURE__ */ Object.keys(ACTION_RULES) as ActionType[];
