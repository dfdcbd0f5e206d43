export { ACTION_RULES, ACTION_TYPES, CORE_EVENT_RULES, EVENT_RULES, EVENT_TYPES, EXPLORE_EVENT_RULES, SURFACES } from './catalog.js';
export type { ActionPayloads, ActionType, AiQueryEvent, CoreEventPayloads, CoreEventType, EmbedTheme, EventPayloads, EventType, ExploreEventPayloads, ExploreEventType, FieldRule, Surface } from './catalog.js';
export { SOURCE, createAction, createEvent } from './envelope.js';
export type { ActionMessage, EventMessage, Message } from './envelope.js';
export { isCoreEvent, isEvent, isExploreEvent, parseAction, parseEvent, parseMessage } from './parse.js';
export type { ParseResult } from './parse.js';
