import { ACTION_RULES, EVENT_RULES, SURFACES } from './catalog.js';
import type { FieldRule } from './catalog.js';
import { SOURCE } from './envelope.js';
import type { ActionMessage, EventMessage, Message } from './envelope.js';

/** A message that passed every check, or why it did not. */
export type ParseResult<M extends Message = Message> = { ok: true; message: M } | { ok: false; reason: string };

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function checkField(name: string, rule: FieldRule, value: unknown): string | undefined {
  if (value === undefined) return rule.optional ? undefined : `payload.${name} is missing`;
  if (value === null) return rule.nullable ? undefined : `payload.${name} must not be null`;
  if (rule.type === 'any') return undefined;
  if (rule.type === 'strings') return Array.isArray(value) && value.every((item) => typeof item === 'string') ? undefined : `payload.${name} must be a list of strings`;
  // A number must be finite: NaN and Infinity do not survive JSON, so no honest peer sends them.
  if (rule.type === 'object' ? !isRecord(value) : typeof value !== rule.type || (rule.type === 'number' && !Number.isFinite(value))) {
    return `payload.${name} must be ${rule.type === 'object' ? 'an object' : `a ${rule.type}`}`;
  }
  if (rule.oneOf !== undefined && !rule.oneOf.includes(value as string)) return `payload.${name} must be one of ${rule.oneOf.join(', ')}`;
  return undefined;
}

type RuleTable = Record<string, Record<string, FieldRule>>;

// The fields of each type as a list, made once: the receive path runs for every message a host gets.
const fieldLists = new WeakMap<Record<string, FieldRule>, Array<[string, FieldRule]>>();
const fieldsOf = (rules: Record<string, FieldRule>) => {
  let list = fieldLists.get(rules);
  if (list === undefined) fieldLists.set(rules, (list = Object.entries(rules)));
  return list;
};

function parseWith(data: unknown, direction: 'event' | 'action', rules: RuleTable): ParseResult {
  if (!isRecord(data)) return { ok: false, reason: 'not an object' };
  if (data.source !== SOURCE) return { ok: false, reason: 'bad source' };
  if (data.direction !== 'event' && data.direction !== 'action') return { ok: false, reason: 'bad direction' };
  if (data.direction !== direction) return { ok: false, reason: `not an ${direction}` };
  if (typeof data.type !== 'string') return { ok: false, reason: 'bad type' };
  if (typeof data.timestamp !== 'number' || !Number.isFinite(data.timestamp)) return { ok: false, reason: 'bad timestamp' };
  const fields = Object.hasOwn(rules, data.type) ? rules[data.type] : undefined;
  if (fields === undefined) return { ok: false, reason: `unknown ${direction} type ${data.type}` };
  if (direction === 'event') {
    if (typeof data.surface !== 'string' || !SURFACES.includes(data.surface as never)) return { ok: false, reason: 'bad surface' };
  } else {
    if (data.surface !== undefined) return { ok: false, reason: 'bad surface' };
    if (data.requestId !== undefined && typeof data.requestId !== 'string') return { ok: false, reason: 'bad requestId' };
  }
  if (!isRecord(data.payload)) return { ok: false, reason: 'bad payload' };
  for (const [name, rule] of fieldsOf(fields)) {
    const problem = checkField(name, rule, data.payload[name]);
    if (problem !== undefined) return { ok: false, reason: `${data.type}: ${problem}` };
  }
  return { ok: true, message: data as unknown as Message };
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
  return parseWith(data, 'event', EVENT_RULES as RuleTable) as ParseResult<EventMessage>;
}

/** `parseEvent`'s twin for actions: what an embed listens for. */
export function parseAction(data: unknown): ParseResult<ActionMessage> {
  return parseWith(data, 'action', ACTION_RULES as RuleTable) as ParseResult<ActionMessage>;
}

/** Either direction: an event or an action, checked against its own catalogue. */
export function parseMessage(data: unknown): ParseResult {
  const direction = isRecord(data) && data.direction === 'action' ? 'action' : 'event';
  return direction === 'event' ? parseEvent(data) : parseAction(data);
}
