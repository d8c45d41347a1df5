/** The client-side checks (docs/product-rules.md, Client-side checks and messages). Each returns the message to toast, or null. */
import { CHANGE_PASSWORD_MIN, REGISTER_PASSWORD_MIN } from './constants';

export function validateLogin(v: { email: string; password: string }): string | null {
  if (!v.email.trim() || !v.password) return 'Please fill in all fields';
  return null;
}

export function validateRegister(v: { email: string; password: string; confirmPassword: string }): string | null {
  if (!v.email.trim() || !v.password) return 'Please fill in all required fields';
  if (v.password !== v.confirmPassword) return 'Passwords do not match';
  if (v.password.length < REGISTER_PASSWORD_MIN) return 'Password must be at least 6 characters long';
  return null;
}

export function validatePasswordChange(v: { currentPassword: string; newPassword: string; confirmPassword: string }): string | null {
  if (!v.currentPassword || !v.newPassword || !v.confirmPassword) return 'Please fill in all password fields';
  if (v.newPassword !== v.confirmPassword) return 'New passwords do not match';
  if (v.newPassword.length < CHANGE_PASSWORD_MIN) return 'New password must be at least 8 characters';
  return null;
}

/** Profile update sends only the changed first and last name; an empty object means "send nothing". */
export function profileChanges(
  original: { firstName?: string | null; lastName?: string | null },
  edited: { firstName: string; lastName: string },
): { firstName?: string; lastName?: string } {
  const changes: { firstName?: string; lastName?: string } = {};
  if (edited.firstName.trim() !== (original.firstName ?? '').trim()) changes.firstName = edited.firstName.trim();
  if (edited.lastName.trim() !== (original.lastName ?? '').trim()) changes.lastName = edited.lastName.trim();
  return changes;
}

/** Reset password (emailed link): the server asks for 8 characters, like a password change. */
export function validateReset(v: { password: string; confirmPassword: string }): string | null {
  if (!v.password || !v.confirmPassword) return 'Please fill in all password fields';
  if (v.password !== v.confirmPassword) return 'Passwords do not match';
  if (v.password.length < CHANGE_PASSWORD_MIN) return 'Password must be at least 8 characters';
  return null;
}
