/** Business constants of SPEC section 9. */
export const REQUEST_TIMEOUT_MS = 30000;
export const CHUNK_LOAD_TIMEOUT_MS = 120000;
export const TOAST_AUTO_CLOSE_MS = 5000;
export const ASSUMED_TOKEN_LIFETIME_S = 3600;
export const REGISTER_PASSWORD_MIN = 6;
export const CHANGE_PASSWORD_MIN = 8;
export const FALLBACK_MAX_FILE_SIZE = 104857600; // 100MB
export const FALLBACK_MAX_FILES = 10;
export const STATUS_POLL_MS = 3000;
export const HISTORY_PAGE_SIZE = 20;
export const ADMIN_USERS_PAGE_SIZE = 10;
export const USAGE_HISTORY_MONTHS = 6;
export const FILE_RETENTION_HOURS = 24;

export const ROLE_DESCRIPTIONS: Record<string, string> = {
  GUEST: 'Guest Account - Limited access',
  USER: 'Standard User Account',
  ENTERPRISE: 'Enterprise Account - Enhanced limits',
  ADMIN: 'Administrator Account',
};
export const ROLES = ['GUEST', 'USER', 'ENTERPRISE', 'ADMIN'] as const;
