/** The client's fixed numbers (docs/product-rules.md, Constants). */
import type { Role } from './types';

export const REQUEST_TIMEOUT_MS = 30000;
export const CHUNK_LOAD_TIMEOUT_MS = 120000;
export const TOAST_AUTO_CLOSE_MS = 5000;
export const ASSUMED_TOKEN_LIFETIME_S = 3600;
export const REGISTER_PASSWORD_MIN = 6;
export const CHANGE_PASSWORD_MIN = 8;
/** The contact form's message: at least this many characters (the server's rule too). */
export const CONTACT_MESSAGE_MIN = 10;
export const FALLBACK_MAX_FILE_SIZE = 104857600; // 100MB
export const FALLBACK_MAX_FILES = 10;
export const STATUS_POLL_MS = 3000;
export const HISTORY_PAGE_SIZE = 20;
export const ADMIN_USERS_PAGE_SIZE = 10;
export const USAGE_HISTORY_MONTHS = 6;
export const FILE_RETENTION_HOURS = 24;

/** One text per role of the API (a role the API adds fails the type check until it has one). */
export const ROLE_DESCRIPTIONS: Record<Role, string> = {
  GUEST: 'Guest Account - Limited access',
  USER: 'Standard User Account',
  ENTERPRISE: 'Enterprise Account - Enhanced limits',
  ADMIN: 'Administrator Account',
};
/** Every role, lowest first. */
export const ROLES = Object.keys(ROLE_DESCRIPTIONS) as Role[];

/** A role's description; none while the role is not known yet (no user loaded). */
export function roleDescription(role: Role | null | undefined): string | undefined {
  return role ? ROLE_DESCRIPTIONS[role] : undefined;
}
