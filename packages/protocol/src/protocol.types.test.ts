import { describe, expectTypeOf, it } from 'vitest';
import { createAction, createEvent } from './index.js';
import type { EventMessage, EventPayloads } from './index.js';

// Type tests: `npm test`'s type-check compiles this file, so each @ts-expect-error must stay an error.
describe('@svc/protocol types', () => {
  it('types each payload by its event name', () => {
    const ready = createEvent('svc:event:ready', { embedTenant: null, deploymentId: 1, mode: 'private', surface: 'app' }, 'app');
    expectTypeOf(ready.payload).toEqualTypeOf<EventPayloads['svc:event:ready']>();
    expectTypeOf(ready.surface).toEqualTypeOf<'dashboard' | 'app' | 'chat'>();
    const narrow = (message: EventMessage) => (message.type === 'svc:event:session-expiring' ? message.payload.expiresInMs : 0);
    expectTypeOf(narrow).returns.toEqualTypeOf<number>();
  });

  it('rejects wrong payloads at compile time', () => {
    // @ts-expect-error format must be csv, xlsx, png or pdf
    createEvent('svc:event:download', { format: 'docx', target: 'widget' }, 'dashboard');
    // @ts-expect-error path is required
    createEvent('svc:event:navigate', {}, 'dashboard');
    // @ts-expect-error sessionId must be a string
    createAction('svc:action:set-session', { sessionId: 1 });
    // @ts-expect-error not an action of the catalogue
    createAction('svc:action:reload', {});
  });
});
