/** Moved to core/core.context.ts; this re-export goes once embed/ imports from there. */
export * from '../core/core.context.js';
