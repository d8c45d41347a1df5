import { api } from '../../lib/api';

export const verifyEmail = (token: string) => api('post', '/api/auth/verify-email', { body: { token } });
export const forgotPassword = (email: string) => api('post', '/api/auth/forgot-password', { body: { email: email.trim() } });
export const resetPassword = (token: string, password: string) =>
  api('post', '/api/auth/reset-password', { body: { token, password } });

const LOGIN_ERRORS: Record<string, string> = {
  google_failed: 'Google sign-in failed. Please try again.',
  google_not_configured: 'Google sign-in is not available on this server.',
  access_denied: 'Google sign-in was cancelled.',
  account_inactive: 'This account has been deactivated. Please contact support.',
  session_expired: 'Your session has expired. Please sign in again.',
};

/** The text for /login?error=...: a known code's sentence, else the text itself. */
export function loginErrorText(raw: string | null): string | null {
  if (!raw) return null;
  const value = raw.trim();
  if (!value) return null;
  if (LOGIN_ERRORS[value]) return LOGIN_ERRORS[value];
  if (/^[a-z0-9_]+$/.test(value)) {
    const words = value.replace(/_/g, ' ');
    return `Sign-in failed: ${words}.`;
  }
  return value;
}
