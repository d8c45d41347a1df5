import { describe, expect, it, vi, afterEach } from 'vitest';
import { authReducer, initialAuthState, type AuthState } from '../../src/lib/auth/state';
import { restoreSession, registerPayload } from '../../src/lib/auth/session';
import {
  STORAGE_KEYS, clearStoredAuth, getStoredExpiry, getStoredTokens, getStoredUser, storeAuth,
} from '../../src/lib/auth/storage';
import type { AuthPayload } from '../../src/lib/types';
import { aUser } from './fixtures';

const user = aUser({ id: 'u1', email: 'ada@example.org', firstName: 'Ada', role: 'USER' });
const tokens = { accessToken: 'a1', refreshToken: 'r1', expiresIn: 900 };
const fresh: AuthPayload = { user: { ...user, firstName: 'Ada2' }, tokens: { accessToken: 'a2', refreshToken: 'r2', expiresIn: 600 } };

afterEach(() => vi.useRealTimers());

describe('auth reducer (docs/product-rules.md, Browser session)', () => {
  it('starts loading and unauthenticated', () => {
    expect(initialAuthState).toEqual({ user: null, tokens: null, isAuthenticated: false, isLoading: true, error: null });
  });
  it('start sets loading and clears the error', () => {
    const s = authReducer({ ...initialAuthState, isLoading: false, error: 'old' }, { type: 'AUTH_START' });
    expect(s.isLoading).toBe(true);
    expect(s.error).toBeNull();
  });
  it('success stores user and tokens and authenticates', () => {
    const s = authReducer(initialAuthState, { type: 'AUTH_SUCCESS', user, tokens });
    expect(s).toEqual({ user, tokens, isAuthenticated: true, isLoading: false, error: null });
  });
  it('failure clears user and tokens and stores the message', () => {
    const signedIn: AuthState = { user, tokens, isAuthenticated: true, isLoading: true, error: null };
    const s = authReducer(signedIn, { type: 'AUTH_FAILURE', error: 'Login failed' });
    expect(s).toEqual({ user: null, tokens: null, isAuthenticated: false, isLoading: false, error: 'Login failed' });
  });
  it('logout clears everything', () => {
    const s = authReducer({ user, tokens, isAuthenticated: true, isLoading: false, error: 'x' }, { type: 'LOGOUT' });
    expect(s).toEqual({ user: null, tokens: null, isAuthenticated: false, isLoading: false, error: null });
  });
  it('profile update replaces the user only; errors can be set and cleared', () => {
    const signedIn: AuthState = { user, tokens, isAuthenticated: true, isLoading: false, error: null };
    const updated = authReducer(signedIn, { type: 'UPDATE_USER', user: { ...user, lastName: 'L' } });
    expect(updated.user?.lastName).toBe('L');
    expect(updated.tokens).toBe(tokens);
    const failed = authReducer(updated, { type: 'SET_ERROR', error: 'Profile update failed' });
    expect(failed.isAuthenticated).toBe(true);
    expect(failed.error).toBe('Profile update failed');
    expect(authReducer(failed, { type: 'CLEAR_ERROR' }).error).toBeNull();
  });
});

describe('local storage of the session', () => {
  it('stores expiry as now + expiresIn in epoch seconds', () => {
    vi.useFakeTimers();
    vi.setSystemTime(new Date('2026-01-01T00:00:00Z'));
    storeAuth(user, tokens);
    expect(getStoredExpiry()).toBe(Date.parse('2026-01-01T00:00:00Z') / 1000 + 900);
    expect(getStoredTokens()).toEqual(tokens);
    expect(getStoredUser()).toEqual(user);
    clearStoredAuth();
    expect(localStorage.length).toBe(0);
  });
});

describe('start-up restore', () => {
  const seed = (expiry: number | null) => {
    localStorage.setItem(STORAGE_KEYS.tokens, JSON.stringify(tokens));
    localStorage.setItem(STORAGE_KEYS.user, JSON.stringify(user));
    if (expiry !== null) localStorage.setItem(STORAGE_KEYS.expiry, String(expiry));
  };
  const now = () => Math.floor(Date.now() / 1000);

  it('does nothing without stored tokens and user', async () => {
    localStorage.setItem(STORAGE_KEYS.user, JSON.stringify(user));
    const refresh = vi.fn();
    expect(await restoreSession(refresh)).toEqual({ kind: 'none' });
    expect(refresh).not.toHaveBeenCalled();
  });
  it('restores an unexpired session without a refresh', async () => {
    seed(now() + 100);
    const refresh = vi.fn();
    expect(await restoreSession(refresh)).toEqual({ kind: 'restored', payload: { user, tokens } });
    expect(refresh).not.toHaveBeenCalled();
  });
  it('assumes one hour and saves it when no expiry is stored', async () => {
    seed(null);
    const result = await restoreSession(vi.fn());
    expect(result.kind).toBe('restored');
    const saved = getStoredExpiry()!;
    expect(saved).toBeGreaterThanOrEqual(now() + 3599);
    expect(saved).toBeLessThanOrEqual(now() + 3600);
  });
  it('refreshes an expired session and stores the new one', async () => {
    seed(now() - 5);
    const refresh = vi.fn().mockResolvedValue(fresh);
    expect(await restoreSession(refresh)).toEqual({ kind: 'refreshed', payload: fresh });
    expect(refresh).toHaveBeenCalledOnce();
    expect(getStoredTokens()).toEqual(fresh.tokens);
    expect(getStoredUser()).toEqual(fresh.user);
    expect(getStoredExpiry()).toBeGreaterThanOrEqual(now() + 599);
  });
  it('clears stored auth data when the refresh fails', async () => {
    seed(now() - 5);
    const result = await restoreSession(vi.fn().mockRejectedValue(new Error('nope')));
    expect(result).toEqual({ kind: 'cleared', error: 'Token refresh failed' });
    expect(getStoredTokens()).toBeNull();
    expect(getStoredUser()).toBeNull();
    expect(getStoredExpiry()).toBeNull();
  });
});

describe('registration payload', () => {
  it('omits empty optional fields', () => {
    expect(registerPayload({ email: ' a@b.org ', password: 'secret1', firstName: '  ', lastName: '', username: undefined }))
      .toEqual({ email: 'a@b.org', password: 'secret1' });
    expect(registerPayload({ email: 'a@b.org', password: 'secret1', firstName: 'Ada', lastName: 'L', username: 'ada' }))
      .toEqual({ email: 'a@b.org', password: 'secret1', firstName: 'Ada', lastName: 'L', username: 'ada' });
  });
});
