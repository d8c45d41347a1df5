import type { User } from '../../src/lib/types';

/** A user as the API sends one, with `overrides` on top. */
export function aUser(overrides: Partial<User> = {}): User {
  return {
    id: 'u1', email: 'ada@example.org', username: null, firstName: null, lastName: null,
    role: 'USER', isActive: true, isEmailVerified: true, lastLogin: null,
    createdAt: '2026-01-01T00:00:00Z', updatedAt: '2026-01-01T00:00:00Z', fileCount: 0,
    sessionCount: 1, ...overrides,
  };
}
