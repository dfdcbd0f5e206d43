import { describe, expectTypeOf, it } from 'vitest';
import type { EmbedHandle } from './embed.js';
import type { SvcEmbedError } from './errors.js';
import type { SvcEmbedEventProps } from './react.js';

// Type tests: `npm test`'s type-check compiles this file, so each expectation and each @ts-expect-error holds
// at compile time. The checks live in functions that never run (there is no embed to run them against).

function handlerTypes(handle: EmbedHandle): void {
  handle.on('download', (payload) => {
    expectTypeOf(payload.format).toEqualTypeOf<'csv' | 'xlsx' | 'png' | 'pdf'>();
    expectTypeOf(payload.rowCount).toEqualTypeOf<number | undefined>();
  });
  handle.on('renewal-failed', (error) => expectTypeOf(error).toEqualTypeOf<SvcEmbedError>());
  expectTypeOf(handle.once('session-expiring')).resolves.toEqualTypeOf<{ expiresAt: number; expiresInMs: number }>();
  expectTypeOf(handle.ready).resolves.toHaveProperty('embedTenant').toEqualTypeOf<string | null>();
}

function compileErrors(handle: EmbedHandle): void {
  // @ts-expect-error not an event of the catalogue
  handle.on('loaded', () => undefined);
  // @ts-expect-error a navigate payload has no widgetCount
  handle.on('navigate', (payload) => payload.widgetCount);
  // @ts-expect-error schemes are light, dark or auto
  handle.setColorScheme('sepia');
}

describe('@svc/embed-sdk types', () => {
  it('types each handler by its event name, and rejects wrong names and payloads (checked by tsc)', () => {
    expectTypeOf(handlerTypes).parameter(0).toEqualTypeOf<EmbedHandle>();
    expectTypeOf(compileErrors).parameter(0).toEqualTypeOf<EmbedHandle>();
  });

  it('names the React event props after the events', () => {
    expectTypeOf<SvcEmbedEventProps['onDashboardLoaded']>().toEqualTypeOf<((payload: { publicId?: string; widgetCount?: number; loadDurationMs?: number }) => void) | undefined>();
    expectTypeOf<SvcEmbedEventProps>().toHaveProperty('onRenewalFailed');
    expectTypeOf<SvcEmbedEventProps>().toHaveProperty('onSessionExpiring');
  });
});
