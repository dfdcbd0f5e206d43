// The admin check lives in core/core.principal.ts, so that rooms below accounts/ (audit/) can use it without an
// import running back up; accounts/ keeps it under its own name for the features above it.
export { requireAdmin } from '../core/core.principal.js';
