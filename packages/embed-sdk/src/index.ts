export { embed } from './embed.js';
export type { EmbedDebug, EmbedEventMap, EmbedEventName, EmbedHandle, EmbedOptions } from './embed.js';
export { SvcEmbedError } from './errors.js';
export type { SvcEmbedErrorCode } from './errors.js';
