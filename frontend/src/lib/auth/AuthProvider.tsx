import { createContext, startTransition, useCallback, useContext, useEffect, useMemo, useReducer, useRef, type ReactNode } from 'react';
import { useNavigate } from 'react-router-dom';
import { useQueryClient } from '@tanstack/react-query';
import { ApiError, setSessionRefreshedHandler, setUnauthorizedHandler } from '../api-client';
import type { AuthPayload, User } from '../types';
import { authReducer, initialAuthState, type AuthState } from './state';
import {
  googleExchangeCall, loginCall, logoutCall, registerCall, restoreSession, updateProfileCall, type RegisterInput,
} from './session';
import { clearStoredAuth, getStoredTokens, storeAuth, storeUser } from './storage';

export interface AuthContextValue extends AuthState {
  login: (email: string, password: string) => Promise<AuthPayload>;
  register: (input: RegisterInput) => Promise<AuthPayload>;
  completeGoogleSignIn: (code: string) => Promise<AuthPayload>;
  logout: (successPath?: string) => Promise<boolean>;
  updateProfile: (changes: { firstName?: string; lastName?: string }) => Promise<User | null>;
  setUser: (user: User) => void;
  clearError: () => void;
}

const AuthContext = createContext<AuthContextValue | null>(null);

function serverMessage(error: unknown): string | undefined {
  return error instanceof ApiError ? error.serverMessage : undefined;
}

export function AuthProvider({ children }: { children: ReactNode }) {
  const [state, dispatch] = useReducer(authReducer, initialAuthState);
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const started = useRef(false);

  useEffect(() => {
    setUnauthorizedHandler(() => {
      queryClient.clear();
      // Remember the page, so signing in again returns there.
      const from = { pathname: window.location.pathname, search: window.location.search, hash: '' };
      startTransition(() => {
        dispatch({ type: 'LOGOUT' });
        void navigate('/login', { replace: true, state: from.pathname === '/login' ? undefined : { from } });
      });
    });
    setSessionRefreshedHandler((payload) => dispatch({ type: 'AUTH_SUCCESS', ...payload }));
    return () => {
      setUnauthorizedHandler(null);
      setSessionRefreshedHandler(null);
    };
  }, [navigate, queryClient]);

  useEffect(() => {
    if (started.current) return;
    started.current = true;
    void restoreSession().then((result) => {
      if (result.kind === 'restored' || result.kind === 'refreshed') {
        dispatch({ type: 'AUTH_SUCCESS', ...result.payload });
      } else {
        dispatch({ type: 'LOADING_DONE' });
      }
    });
  }, []);

  const succeed = useCallback((payload: AuthPayload) => {
    storeAuth(payload.user, payload.tokens);
    dispatch({ type: 'AUTH_SUCCESS', ...payload });
    return payload;
  }, []);

  const login = useCallback(async (email: string, password: string) => {
    dispatch({ type: 'AUTH_START' });
    try {
      return succeed(await loginCall(email, password));
    } catch (error) {
      clearStoredAuth();
      dispatch({ type: 'AUTH_FAILURE', error: serverMessage(error) || 'Login failed' });
      throw error;
    }
  }, [succeed]);

  /** Registration ends on the sign-in page (SPEC), so it leaves no one signed in there: the
   * session the server opened with the new account is ended (its refresh token revoked, without
   * any stored token so another account's session is untouched) and nothing is stored. */
  const register = useCallback(async (input: RegisterInput) => {
    dispatch({ type: 'AUTH_START' });
    let payload: AuthPayload;
    try {
      payload = await registerCall(input);
    } catch (error) {
      clearStoredAuth();
      dispatch({ type: 'AUTH_FAILURE', error: serverMessage(error) || 'Registration failed' });
      throw error;
    }
    clearStoredAuth();
    queryClient.clear();
    dispatch({ type: 'LOGOUT' });
    void logoutCall(payload.tokens.refreshToken).catch(() => undefined);
    return payload;
  }, [queryClient]);

  const completeGoogleSignIn = useCallback(async (code: string) => {
    dispatch({ type: 'AUTH_START' });
    try {
      return succeed(await googleExchangeCall(code));
    } catch (error) {
      clearStoredAuth();
      dispatch({ type: 'AUTH_FAILURE', error: serverMessage(error) || 'Login failed' });
      throw error;
    }
  }, [succeed]);

  /**
   * Calls the server only when tokens exist; always clears local data. Ends at /login, or at
   * `successPath` when the server call succeeded. Returns false if the call failed.
   */
  const logout = useCallback(async (successPath?: string) => {
    const tokens = getStoredTokens();
    let ok = true;
    if (tokens) {
      try {
        await logoutCall(tokens.refreshToken);
      } catch (error) {
        // 401: the server had already ended this session, which is what signing out wants.
        ok = error instanceof ApiError && error.status === 401;
      }
    }
    clearStoredAuth();
    queryClient.clear();
    // One transition for both, so a guarded page never renders signed-out at its old URL
    // (its own redirect would otherwise win over ours).
    startTransition(() => {
      dispatch({ type: 'LOGOUT' });
      void navigate(ok && successPath ? successPath : '/login', { replace: true });
    });
    return ok;
  }, [navigate, queryClient]);

  const setUser = useCallback((user: User) => {
    storeUser(user);
    dispatch({ type: 'UPDATE_USER', user });
  }, []);

  const updateProfile = useCallback(async (changes: { firstName?: string; lastName?: string }) => {
    if (Object.keys(changes).length === 0) return null;
    try {
      const user = await updateProfileCall(changes);
      setUser(user);
      return user;
    } catch (error) {
      dispatch({ type: 'SET_ERROR', error: 'Profile update failed' });
      throw error;
    }
  }, [setUser]);

  const clearError = useCallback(() => dispatch({ type: 'CLEAR_ERROR' }), []);

  const value = useMemo<AuthContextValue>(() => ({
    ...state, login, register, completeGoogleSignIn, logout, updateProfile, setUser, clearError,
  }), [state, login, register, completeGoogleSignIn, logout, updateProfile, setUser, clearError]);

  return <AuthContext.Provider value={value}>{children}</AuthContext.Provider>;
}

export function useAuth(): AuthContextValue {
  const ctx = useContext(AuthContext);
  if (!ctx) throw new Error('useAuth must be used inside <AuthProvider>');
  return ctx;
}

/** First letter of firstName, else of the email; name: firstName, else the email's local part, else 'User'. */
export function displayInitial(user: Pick<User, 'firstName' | 'email'> | null | undefined): string {
  const source = user?.firstName?.trim() || user?.email || '';
  return source ? source.charAt(0).toUpperCase() : 'U';
}
export function displayName(user: Pick<User, 'firstName' | 'email'> | null | undefined): string {
  return user?.firstName?.trim() || user?.email?.split('@')[0] || 'User';
}
