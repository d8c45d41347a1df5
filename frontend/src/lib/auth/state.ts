/** The auth state machine (docs/product-rules.md, Browser session). Pure, so it can be tested on its own. */
import type { Tokens, User } from '../types';

export interface AuthState {
  user: User | null;
  tokens: Tokens | null;
  isAuthenticated: boolean;
  isLoading: boolean;
  error: string | null;
}

export type AuthAction =
  | { type: 'AUTH_START' }
  | { type: 'AUTH_SUCCESS'; user: User; tokens: Tokens }
  | { type: 'AUTH_FAILURE'; error: string }
  | { type: 'LOGOUT' }
  | { type: 'UPDATE_USER'; user: User }
  | { type: 'SET_ERROR'; error: string }
  | { type: 'CLEAR_ERROR' }
  | { type: 'LOADING_DONE' };

export const initialAuthState: AuthState = {
  user: null,
  tokens: null,
  isAuthenticated: false,
  isLoading: true,
  error: null,
};

export function authReducer(state: AuthState, action: AuthAction): AuthState {
  switch (action.type) {
    case 'AUTH_START':
      return { ...state, isLoading: true, error: null };
    case 'AUTH_SUCCESS':
      return { user: action.user, tokens: action.tokens, isAuthenticated: true, isLoading: false, error: null };
    case 'AUTH_FAILURE':
      return { user: null, tokens: null, isAuthenticated: false, isLoading: false, error: action.error };
    case 'LOGOUT':
      return { user: null, tokens: null, isAuthenticated: false, isLoading: false, error: null };
    case 'UPDATE_USER':
      return { ...state, user: action.user };
    case 'SET_ERROR':
      return { ...state, error: action.error };
    case 'CLEAR_ERROR':
      return { ...state, error: null };
    case 'LOADING_DONE':
      return { ...state, isLoading: false };
    default:
      return state;
  }
}
