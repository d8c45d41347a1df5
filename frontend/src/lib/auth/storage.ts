/** What stays in local storage: the tokens, the user and an expiry in epoch seconds
 * (docs/product-rules.md, Browser session). */
import { ASSUMED_TOKEN_LIFETIME_S } from '../constants';
import type { Tokens, User } from '../types';

export const STORAGE_KEYS = {
  tokens: 'sanitas.tokens',
  user: 'sanitas.user',
  expiry: 'sanitas.tokenExpiry',
} as const;

export const nowSeconds = () => Math.floor(Date.now() / 1000);

function readJson<T>(key: string): T | null {
  try {
    const raw = localStorage.getItem(key);
    return raw ? (JSON.parse(raw) as T) : null;
  } catch {
    return null;
  }
}

export function getStoredTokens(): Tokens | null {
  const tokens = readJson<Tokens>(STORAGE_KEYS.tokens);
  return tokens && typeof tokens.accessToken === 'string' ? tokens : null;
}

export function getStoredUser(): User | null {
  return readJson<User>(STORAGE_KEYS.user);
}

export function getStoredExpiry(): number | null {
  const raw = localStorage.getItem(STORAGE_KEYS.expiry);
  if (raw === null) return null;
  const value = Number(raw);
  return Number.isFinite(value) ? value : null;
}

export function setStoredExpiry(epochSeconds: number): void {
  localStorage.setItem(STORAGE_KEYS.expiry, String(epochSeconds));
}

/** After login, registration or refresh: tokens, user, and expiry = now + expiresIn. */
export function storeAuth(user: User, tokens: Tokens): void {
  localStorage.setItem(STORAGE_KEYS.tokens, JSON.stringify(tokens));
  localStorage.setItem(STORAGE_KEYS.user, JSON.stringify(user));
  const lifetime = Number.isFinite(tokens.expiresIn) && tokens.expiresIn > 0
    ? tokens.expiresIn : ASSUMED_TOKEN_LIFETIME_S;
  setStoredExpiry(nowSeconds() + lifetime);
}

export function storeUser(user: User): void {
  localStorage.setItem(STORAGE_KEYS.user, JSON.stringify(user));
}

export function clearStoredAuth(): void {
  localStorage.removeItem(STORAGE_KEYS.tokens);
  localStorage.removeItem(STORAGE_KEYS.user);
  localStorage.removeItem(STORAGE_KEYS.expiry);
}
