/**
 * The one HTTP client: 30000 ms timeout, JSON by default, the bearer access token on every
 * request, a refresh when the stored expiry has passed, the three error texts and a forced
 * sign-out on any 401 (docs/product-rules.md, "Client-side checks and messages" and "Browser
 * session"). Features call it through the typed `api()` of ./api; only downloads (./download)
 * use `apiClient` directly.
 */
import axios, { type AxiosError, type InternalAxiosRequestConfig } from 'axios';
import { REQUEST_TIMEOUT_MS } from './constants';
import {
  clearStoredAuth, getStoredExpiry, getStoredTokens, nowSeconds, storeAuth,
} from './auth/storage';
import type { AuthPayload, Envelope } from './types';

/** An error with the client's error text as `message`, plus what a screen needs to show more. */
export class ApiError extends Error {
  status?: number;
  serverMessage?: string;
  code?: string;
  /** A 422's refused fields (camelCase body paths, messages in plain words): lib/form-errors.ts. */
  fields?: { field: string | null; message: string; code: string }[];
  kind: 'api' | 'network' | 'request';
  constructor(message: string, kind: 'api' | 'network' | 'request', extra: Partial<ApiError> = {}) {
    super(message);
    this.name = 'ApiError';
    this.kind = kind;
    Object.assign(this, extra);
  }
}

interface ErrorBody {
  message?: string;
  error?: string | { message?: string; code?: string };
  fields?: ApiError['fields'];
}

/** 'API Error: {message} (status)' | 'Network error: No response from server' | 'Request error: {message}'. */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  const err = error as AxiosError<ErrorBody>;
  if (err?.response) {
    const body = err.response.data ?? {};
    const fromError = typeof body.error === 'object' && body.error ? body.error.message : undefined;
    const serverMessage = fromError || body.message || undefined;
    const code = typeof body.error === 'string' ? body.error : body.error?.code;
    return new ApiError(`API Error: ${serverMessage || 'Server error'} (${err.response.status})`, 'api', {
      status: err.response.status, serverMessage, code, fields: Array.isArray(body.fields) ? body.fields : undefined,
    });
  }
  if (err?.request) return new ApiError('Network error: No response from server', 'network');
  return new ApiError(`Request error: ${(err as Error)?.message ?? String(error)}`, 'request');
}

/** The text a toast shows: the server's message when present, else the fallback. */
export function messageOf(error: unknown, fallback: string): string {
  if (error instanceof ApiError && error.serverMessage) return error.serverMessage;
  return fallback;
}

type UnauthorizedHandler = () => void;
let onUnauthorized: UnauthorizedHandler | null = null;
/** The auth provider registers what "forced sign-out" means for the UI (state + /login). */
export function setUnauthorizedHandler(handler: UnauthorizedHandler | null): void {
  onUnauthorized = handler;
}
type SessionListener = (payload: AuthPayload) => void;
let onSessionRefreshed: SessionListener | null = null;
export function setSessionRefreshedHandler(handler: SessionListener | null): void {
  onSessionRefreshed = handler;
}

/** Calls whose 401 means "wrong credentials or link", not "your session ended". */
const CREDENTIAL_PATHS = ['/api/auth/login', '/api/auth/refresh', '/api/auth/register',
  '/api/auth/reset-password', '/api/auth/verify-email', '/api/auth/google/exchange',
  '/api/auth/forgot-password', '/api/auth/logout'];
const isCredentialCall = (url?: string) => !!url && CREDENTIAL_PATHS.some((p) => url.startsWith(p));

export const apiClient = axios.create({
  baseURL: import.meta.env.VITE_API_BASE_URL ?? '',
  timeout: REQUEST_TIMEOUT_MS,
  headers: { Accept: 'application/json' },
});

let refreshing: Promise<AuthPayload> | null = null;

/** One refresh at a time; stores the new user and tokens (expiry = now + expiresIn). */
export function refreshSession(): Promise<AuthPayload> {
  if (!refreshing) {
    refreshing = (async () => {
      const tokens = getStoredTokens();
      if (!tokens?.refreshToken) throw new ApiError('No refresh token available', 'request');
      try {
        const res = await axios.post<Envelope<AuthPayload>>(
          `${apiClient.defaults.baseURL ?? ''}/api/auth/refresh`,
          { refreshToken: tokens.refreshToken },
          { timeout: REQUEST_TIMEOUT_MS },
        );
        if (!res.data?.success || !res.data.data?.tokens) throw new Error('Token refresh failed');
        storeAuth(res.data.data.user, res.data.data.tokens);
        onSessionRefreshed?.(res.data.data);
        return res.data.data;
      } catch {
        throw new ApiError('Token refresh failed', 'api');
      }
    })().finally(() => {
      refreshing = null;
    });
  }
  return refreshing;
}

apiClient.interceptors.request.use(async (config: InternalAxiosRequestConfig) => {
  let tokens = getStoredTokens();
  const expiry = getStoredExpiry();
  if (tokens?.refreshToken && expiry !== null && expiry <= nowSeconds() + 5
      && !isCredentialCall(config.url)) {
    try {
      tokens = (await refreshSession()).tokens;
    } catch {
      // Leave the stale token: the server answers 401 and the forced sign-out follows.
    }
  }
  if (tokens?.accessToken) config.headers.set('Authorization', `Bearer ${tokens.accessToken}`);
  return config;
});

apiClient.interceptors.response.use(
  (response) => response,
  (error: AxiosError) => {
    // Forced sign-out when a signed-in call (one that carried a token) is refused; an
    // anonymous visitor's 401 is just an error to show.
    const hadToken = !!error.config?.headers?.get?.('Authorization');
    if (error.response?.status === 401 && hadToken && !isCredentialCall(error.config?.url)) {
      clearStoredAuth();
      onUnauthorized?.();
    }
    const response = error.response;
    const data = response?.data;
    if (response && typeof Blob !== 'undefined' && data instanceof Blob) {
      // A blob request (download) gets its JSON error body as a Blob: read it first.
      return data.text().then((text) => {
        try {
          response.data = JSON.parse(text);
        } catch { /* not JSON */ }
        return Promise.reject(toApiError(error));
      }, () => Promise.reject(toApiError(error)));
    }
    return Promise.reject(toApiError(error));
  },
);
