import { describe, expect, it } from 'vitest';
import { AppError, errorBody } from './core.errors.js';

describe('AppError', () => {
  it('keeps the field and the detail of an error made at a field, so no caller reads its message apart', () => {
    const error = AppError.at('invalid_parameter', 'query.filters[0].values[0]', '"x" is not a number');
    expect(error.message).toBe('query.filters[0].values[0]: "x" is not a number');
    expect(error.field).toBe('query.filters[0].values[0]');
    expect(error.detail).toBe('"x" is not a number');
    expect(errorBody(error)).toEqual({ error: { status: 400, code: 'invalid_parameter', message: 'query.filters[0].values[0]: "x" is not a number', field: 'query.filters[0].values[0]' } });
  });

  it('has its whole message as the detail when made without a field', () => {
    const error = new AppError('forbidden', 'a policy hides it');
    expect(error.detail).toBe('a policy hides it');
    expect(error.status).toBe(403);
  });

  it('carries each thing at fault in the body\'s details, and the statuses of the conditional-request codes', () => {
    const details = [{ field: 'meta.query.measures[0]', message: 'gone', publicId: 'sales', widgetId: 'w1' }];
    const error = new AppError('conflict', 'this model would break 1 widget', 'semanticViews', undefined, details);
    expect(errorBody(error)).toEqual({ error: { status: 409, code: 'conflict', message: 'this model would break 1 widget', field: 'semanticViews', details } });
    expect(errorBody(new AppError('forbidden', 'no')).error).not.toHaveProperty('details');
    expect(new AppError('precondition_failed', 'stale').status).toBe(412);
    expect(new AppError('precondition_required', 'none').status).toBe(428);
  });
});
