// What svc serves for a page without a bundler (`/sdk/embed-sdk.js`, and `SvcEmbed` of `/sdk/embed-sdk.iife.js`):
// both entries in one file, so that a plain <script> tag has all of it.
export * from './index.js';
export * from './tools.js';
