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
});
