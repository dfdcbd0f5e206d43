import { ACTION_RULES, CORE_EVENT_RULES, EVENT_RULES, EXPLORE_EVENT_RULES, SURFACES } from './catalog.js';
import type { FieldRule } from './catalog.js';
import { SOURCE } from './envelope.js';
import type { CoreEventType, ExploreEventType } from './catalog.js';
import type { ActionMessage, EventMessage, Message } from './envelope.js';

/** A message that passed every check, or why it did not. */
export type ParseResult<M extends Message = Message> = { ok: true; message: M } | { ok: false; reason: string };

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Why a message failed, as data: a check's number (an index of REASONS), then the type and field it names. The
 * words are made only by `parseEvent`/`parseAction`: a bundle that only asks `isEvent` carries none of them (the
 * SDK's size budget; its tools entry asks for the words).
 */
type Failure = [check: number, type?: string, name?: string, rule?: FieldRule];

/** Which check of a payload field fails (10 + an index of FIELD_REASONS, or 13 and 14), or 0 when none does. */
function checkField(rule: FieldRule, value: unknown): number {
  const { type, oneOf } = rule;
  return value === undefined ? (rule.optional ? 0 : 10)
    : value === null ? (rule.nullable ? 0 : 11)
      : type === 'any' ? 0
        : type === 'strings' ? (Array.isArray(value) && value.every((item) => typeof item === 'string') ? 0 : 12)
          // A number must be finite: NaN and Infinity do not survive JSON, so no honest peer sends them.
          : (type === 'object' ? !isRecord(value) : type === 'number' ? !Number.isFinite(value) : typeof value !== type) ? 13
            : oneOf !== undefined && !oneOf.includes(value as string) ? 14 : 0;
}

type RuleTable = Record<string, Record<string, FieldRule>>;

/**
 * The checks both directions share, in order (the first that fails is the failure); `ownCheck` is the
 * direction's own (an event's surface; an action's absent surface and its requestId), so that a bundle with only
 * the event side carries no action check.
 */
function failureOf(data: unknown, direction: 'event' | 'action', rules: RuleTable, ownCheck: (data: Record<string, unknown>) => number): Failure | undefined {
  if (!isRecord(data)) return [0];
  const { type, payload } = data;
  const check = data.source !== SOURCE ? 1
    : data.direction !== 'event' && data.direction !== 'action' ? 2
      : data.direction !== direction ? 3
        : typeof type !== 'string' ? 4
          : !Number.isFinite(data.timestamp) ? 5
            : !Object.hasOwn(rules, type) ? 6
              : ownCheck(data) || (isRecord(payload) ? 0 : 9);
  if (check) return [check, type as string];
  const fields = rules[type as string]!;
  // for-in over a plain object literal: V8 keeps its keys in an enum cache, as fast as a list made once.
  for (const name in fields) {
    const rule = fields[name]!;
    const problem = checkField(rule, (payload as Record<string, unknown>)[name]);
    if (problem) return [problem, type as string, name, rule];
  }
  return undefined;
}

const REASONS = ['not an object', 'bad source', 'bad direction', 'not an ', 'bad type', 'bad timestamp', 'unknown ', 'bad surface', 'bad requestId', 'bad payload', 'is missing', 'must not be null', 'must be a list of strings'];

/** The words of a failure (what `parseEvent` and `parseAction` say). */
function reasonOf([check, type, name, rule]: Failure, direction: 'event' | 'action'): string {
  if (check === 3) return `not an ${direction}`;
  if (check === 6) return `unknown ${direction} type ${type}`;
  if (check < 10) return REASONS[check]!;
  const problem = check === 13 ? `must be ${rule!.type === 'object' ? 'an object' : `a ${rule!.type}`}`
    : check === 14 ? `must be one of ${rule!.oneOf!.join(', ')}` : REASONS[check]!;
  return `${type}: payload.${name} ${problem}`;
}

const eventCheck = (event: Record<string, unknown>) => (SURFACES.includes(event.surface as never) ? 0 : 7);
const actionCheck = (action: Record<string, unknown>) => (action.surface !== undefined ? 7
  : action.requestId !== undefined && typeof action.requestId !== 'string' ? 8 : 0);

function parseWith(data: unknown, direction: 'event' | 'action', rules: RuleTable, ownCheck: (data: Record<string, unknown>) => number): ParseResult {
  const failure = failureOf(data, direction, rules, ownCheck);
  return failure ? { ok: false, reason: reasonOf(failure, direction) } : { ok: true, message: data as Message };
}

/**
 * Whether `data` is an svc event, by the same checks as `parseEvent`, without saying why not: what a host needs on
 * its receive path, in fewer bytes (none of the reasons' words).
 */
export function isEvent(data: unknown): data is EventMessage {
  return !failureOf(data, 'event', EVENT_RULES as RuleTable, eventCheck);
}

/**
 * `isEvent` for the core events only (SPEC's and svc's extensions but exploration's): the SDK's main entry guards
 * with it and so carries no rule of exploration (its size budget, issue 37); `isExploreEvent` is the other half.
 */
export function isCoreEvent(data: unknown): data is EventMessage<CoreEventType> {
  return !failureOf(data, 'event', CORE_EVENT_RULES as RuleTable, eventCheck);
}

/** `isEvent` for exploration's events only (issue 35): what `@svc/embed-sdk/explore` listens for. */
export function isExploreEvent(data: unknown): data is EventMessage<ExploreEventType> {
  return !failureOf(data, 'event', EXPLORE_EVENT_RULES as RuleTable, eventCheck);
}

/**
 * Checks that `data` (a `MessageEvent.data`) is an svc event of the SPEC envelope with a payload of its type's
 * shape, and says why not. Payloads may carry fields beyond the catalogue's (a newer peer); the envelope may not
 * lie about its direction, surface or type. What a host listens for.
 *
 * @example
 * const parsed = parseEvent(event.data);
 * if (!parsed.ok) console.debug('dropped:', parsed.reason);
 */
export function parseEvent(data: unknown): ParseResult<EventMessage> {
  return parseWith(data, 'event', EVENT_RULES as RuleTable, eventCheck) as ParseResult<EventMessage>;
}

/** `parseEvent`'s twin for actions: what an embed listens for. */
export function parseAction(data: unknown): ParseResult<ActionMessage> {
  return parseWith(data, 'action', ACTION_RULES as RuleTable, actionCheck) as ParseResult<ActionMessage>;
}

/** Either direction: an event or an action, checked against its own catalogue. */
export function parseMessage(data: unknown): ParseResult {
  const direction = isRecord(data) && data.direction === 'action' ? 'action' : 'event';
  return direction === 'event' ? parseEvent(data) : parseAction(data);
}
