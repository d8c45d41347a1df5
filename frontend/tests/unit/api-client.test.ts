import axios, { AxiosError, AxiosHeaders, type AxiosAdapter, type InternalAxiosRequestConfig } from 'axios';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { api } from '../../src/lib/api';
import { ApiError, apiClient, messageOf, setUnauthorizedHandler, toApiError } from '../../src/lib/api-client';
import { STORAGE_KEYS, getStoredTokens, storeAuth } from '../../src/lib/auth/storage';
import { REQUEST_TIMEOUT_MS } from '../../src/lib/constants';
import { aUser } from './fixtures';

const user = aUser({ id: 'u1', email: 'ada@example.org', role: 'USER' });
const tokens = { accessToken: 'access-1', refreshToken: 'refresh-1', expiresIn: 900 };

function respond(status: number, data: unknown): AxiosAdapter {
  return async (config: InternalAxiosRequestConfig) => {
    const response = { data, status, statusText: String(status), headers: {}, config };
    if (status >= 400) throw new AxiosError(`Request failed with status code ${status}`, 'ERR_BAD_RESPONSE', config, {}, response);
    return response;
  };
}

let seen: InternalAxiosRequestConfig[] = [];
const originalAdapter = apiClient.defaults.adapter;
function useAdapter(status: number, data: unknown) {
  const inner = respond(status, data);
  apiClient.defaults.adapter = (config) => {
    seen.push(config);
    return inner(config);
  };
}

beforeEach(() => { seen = []; });
afterEach(() => {
  apiClient.defaults.adapter = originalAdapter;
  setUnauthorizedHandler(null);
  vi.restoreAllMocks();
});

describe('error texts (docs/product-rules.md, Client-side checks and messages)', () => {
  const cfg = { headers: new AxiosHeaders() } as InternalAxiosRequestConfig;
  const withResponse = (status: number, data: unknown) =>
    new AxiosError('x', 'ERR', cfg, {}, { data, status, statusText: '', headers: {}, config: cfg });

  it('API errors use error.message, else message, else Server error', () => {
    expect(toApiError(withResponse(400, { error: { message: 'Bad file' }, message: 'other' })).message).toBe('API Error: Bad file (400)');
    expect(toApiError(withResponse(409, { success: false, message: 'Email taken', error: 'email_taken' })).message).toBe('API Error: Email taken (409)');
    expect(toApiError(withResponse(500, {})).message).toBe('API Error: Server error (500)');
    expect(toApiError(withResponse(502, '<html>')).message).toBe('API Error: Server error (502)');
  });
  it('no response is a network error; anything else a request error', () => {
    expect(toApiError(new AxiosError('timeout', 'ECONNABORTED', cfg, {})).message).toBe('Network error: No response from server');
    expect(toApiError(new Error('bad url')).message).toBe('Request error: bad url');
  });
  it('keeps the server message and status for toasts', () => {
    const err = toApiError(withResponse(403, { message: 'Monthly upload quota exceeded', error: 'quota_exceeded' }));
    expect(err).toBeInstanceOf(ApiError);
    expect(err.status).toBe(403);
    expect(err.code).toBe('quota_exceeded');
    expect(messageOf(err, 'fallback')).toBe('Monthly upload quota exceeded');
    expect(messageOf(new Error('x'), 'fallback')).toBe('fallback');
  });
});

describe('the client', () => {
  it('has the 30000 ms timeout and sends the stored bearer token', async () => {
    expect(apiClient.defaults.timeout).toBe(REQUEST_TIMEOUT_MS);
    storeAuth(user, tokens);
    useAdapter(200, { success: true, message: 'ok', data: { n: 1 } });
    // A call answers the whole {success, message, data} envelope.
    const body = await api('get', '/api/usage/stats');
    expect(body).toEqual({ success: true, message: 'ok', data: { n: 1 } });
    expect(seen[0].headers.get('Authorization')).toBe('Bearer access-1');
  });
  it('sends no Authorization header when signed out', async () => {
    useAdapter(200, { success: true, message: 'ok', data: null });
    await api('get', '/api/upload/info');
    expect(seen[0].headers.get('Authorization')).toBeFalsy();
  });
  it('rethrows HTTP failures with the client error text', async () => {
    useAdapter(413, { success: false, message: 'File too large', error: 'payload_too_large' });
    await expect(api('get', '/api/usage/stats')).rejects.toThrow('API Error: File too large (413)');
  });
});

describe('401 handling', () => {
  it('a signed-in 401 removes stored auth data and forces sign-out', async () => {
    storeAuth(user, tokens);
    const handler = vi.fn();
    setUnauthorizedHandler(handler);
    useAdapter(401, { success: false, message: 'Authentication required. Please sign in.', error: 'unauthorized' });
    await expect(api('get', '/api/usage/stats')).rejects.toThrow('API Error: Authentication required. Please sign in. (401)');
    expect(handler).toHaveBeenCalledOnce();
    expect(localStorage.getItem(STORAGE_KEYS.tokens)).toBeNull();
    expect(localStorage.getItem(STORAGE_KEYS.user)).toBeNull();
    expect(localStorage.getItem(STORAGE_KEYS.expiry)).toBeNull();
  });
  it('wrong credentials at login are an error, not a forced sign-out', async () => {
    storeAuth(user, tokens);
    const handler = vi.fn();
    setUnauthorizedHandler(handler);
    useAdapter(401, { success: false, message: 'Invalid email or password', error: 'invalid_credentials' });
    await expect(apiClient.post('/api/auth/login', {})).rejects.toThrow('Invalid email or password');
    expect(handler).not.toHaveBeenCalled();
    expect(getStoredTokens()).toEqual(tokens);
  });
  it('an anonymous 401 does not redirect', async () => {
    const handler = vi.fn();
    setUnauthorizedHandler(handler);
    useAdapter(401, { success: false, message: 'Authentication required', error: 'unauthorized' });
    await expect(api('get', '/api/upload/info')).rejects.toBeInstanceOf(ApiError);
    expect(handler).not.toHaveBeenCalled();
  });
});

describe('refresh on expiry', () => {
  it('refreshes before a call when the stored expiry has passed, then uses the new token', async () => {
    storeAuth(user, tokens);
    localStorage.setItem(STORAGE_KEYS.expiry, String(Math.floor(Date.now() / 1000) - 10));
    const post = vi.spyOn(axios, 'post').mockResolvedValue({
      data: { success: true, message: 'Token refreshed', data: { user, tokens: { accessToken: 'access-2', refreshToken: 'refresh-2', expiresIn: 900 } } },
    });
    useAdapter(200, { success: true, message: 'ok', data: null });
    await Promise.all([api('get', '/api/usage/stats'), api('get', '/api/upload/info')]);
    expect(post).toHaveBeenCalledOnce(); // one refresh for concurrent calls
    expect(post.mock.calls[0][0]).toMatch(/\/api\/auth\/refresh$/);
    expect(post.mock.calls[0][1]).toEqual({ refreshToken: 'refresh-1' });
    expect(seen.map((c) => c.headers.get('Authorization'))).toEqual(['Bearer access-2', 'Bearer access-2']);
    expect(getStoredTokens()?.refreshToken).toBe('refresh-2');
  });
});
