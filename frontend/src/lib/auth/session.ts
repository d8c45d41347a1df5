/** Start-up restore (docs/product-rules.md, Browser session) and the auth calls that the provider wraps. */
import { api } from '../api';
import { ApiError, refreshSession } from '../api-client';
import { ASSUMED_TOKEN_LIFETIME_S } from '../constants';
import type { AuthPayload, Envelope, User } from '../types';
import {
  clearStoredAuth, getStoredExpiry, getStoredTokens, getStoredUser, nowSeconds, setStoredExpiry, storeAuth,
} from './storage';

export type RestoreResult =
  | { kind: 'restored'; payload: AuthPayload }
  | { kind: 'refreshed'; payload: AuthPayload }
  | { kind: 'none' }
  | { kind: 'cleared'; error: string };

/**
 * If stored tokens and user exist, check the expiry (none stored: now + 3600 s is assumed and
 * saved). Not expired: restore. Expired: refresh; success stores the new session, failure
 * clears the stored auth data.
 */
export async function restoreSession(refresh: () => Promise<AuthPayload> = refreshSession): Promise<RestoreResult> {
  const tokens = getStoredTokens();
  const user = getStoredUser();
  if (!tokens || !user) return { kind: 'none' };
  let expiry = getStoredExpiry();
  if (expiry === null) {
    expiry = nowSeconds() + ASSUMED_TOKEN_LIFETIME_S;
    setStoredExpiry(expiry);
  }
  if (expiry > nowSeconds()) return { kind: 'restored', payload: { user, tokens } };
  if (!tokens.refreshToken) {
    clearStoredAuth();
    return { kind: 'cleared', error: 'No refresh token available' };
  }
  try {
    const payload = await refresh();
    storeAuth(payload.user, payload.tokens);
    return { kind: 'refreshed', payload };
  } catch {
    clearStoredAuth();
    return { kind: 'cleared', error: 'Token refresh failed' };
  }
}

export interface RegisterInput {
  email: string;
  password: string;
  firstName?: string;
  lastName?: string;
  username?: string;
}

/** Empty optional fields are left out of the payload (docs/product-rules.md, Accounts and passwords). */
export function registerPayload(input: RegisterInput): RegisterInput {
  const payload: RegisterInput = { email: input.email.trim(), password: input.password };
  for (const key of ['firstName', 'lastName', 'username'] as const) {
    const value = input[key]?.trim();
    if (value) payload[key] = value;
  }
  return payload;
}

function unwrapAuth(body: Envelope<AuthPayload>, fallback: string): AuthPayload {
  if (!body?.success || !body.data?.user || !body.data?.tokens) {
    throw new ApiError(body?.message || fallback, 'api', { serverMessage: body?.message || undefined });
  }
  return body.data;
}

export async function loginCall(email: string, password: string): Promise<AuthPayload> {
  return unwrapAuth(await api('post', '/api/auth/login', { body: { email: email.trim(), password } }), 'Login failed');
}

export async function registerCall(input: RegisterInput): Promise<AuthPayload> {
  return unwrapAuth(await api('post', '/api/auth/register', { body: registerPayload(input) }), 'Registration failed');
}

export async function googleExchangeCall(code: string): Promise<AuthPayload> {
  return unwrapAuth(await api('post', '/api/auth/google/exchange', { body: { code } }), 'Google sign-in failed');
}

export async function logoutCall(refreshToken?: string): Promise<void> {
  await api('post', '/api/auth/logout', { body: refreshToken ? { refreshToken } : {} });
}

export async function updateProfileCall(changes: { firstName?: string; lastName?: string }): Promise<User> {
  const body = await api('put', '/api/auth/profile', { body: changes });
  if (!body?.success) throw new ApiError(body?.message || 'Profile update failed', 'api');
  return body.data;
}
