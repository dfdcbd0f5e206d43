export { ACTION_RULES, ACTION_TYPES, EVENT_RULES, EVENT_TYPES, SURFACES } from './catalog.js';
export type { ActionPayloads, ActionType, AiQueryEvent, EmbedTheme, EventPayloads, EventType, FieldRule, Surface } from './catalog.js';
export { SOURCE, createAction, createEvent } from './envelope.js';
export type { ActionMessage, EventMessage, Message } from './envelope.js';
export { isEvent, parseAction, parseEvent, parseMessage } from './parse.js';
export type { ParseResult } from './parse.js';
