export { embed, embedUrl } from './embed.js';
export type { EmbedEventMap, EmbedEventName, EmbedHandle, EmbedOptions } from './embed.js';
export { SvcEmbedError } from './errors.js';
export type { SvcEmbedErrorCode } from './errors.js';
export { RENEWAL_BACKOFF_MS, SessionRenewal } from './renewal.js';
export type { RenewalDeps } from './renewal.js';
