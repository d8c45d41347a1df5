import { describe, expect, it } from 'vitest';
import { profileChanges, validateLogin, validatePasswordChange, validateRegister } from '../../src/lib/validation';

describe('login rules', () => {
  it('needs email and password', () => {
    expect(validateLogin({ email: '', password: 'x' })).toBe('Please fill in all fields');
    expect(validateLogin({ email: '  ', password: 'x' })).toBe('Please fill in all fields');
    expect(validateLogin({ email: 'a@b.org', password: '' })).toBe('Please fill in all fields');
    expect(validateLogin({ email: 'a@b.org', password: 'x' })).toBeNull();
  });
});

describe('registration rules', () => {
  const ok = { email: 'a@b.org', password: 'secret', confirmPassword: 'secret' };
  it('needs email and password', () => {
    expect(validateRegister({ ...ok, email: '' })).toBe('Please fill in all required fields');
    expect(validateRegister({ ...ok, password: '', confirmPassword: '' })).toBe('Please fill in all required fields');
  });
  it('checks the confirmation before the length', () => {
    expect(validateRegister({ ...ok, confirmPassword: 'secreT' })).toBe('Passwords do not match');
    expect(validateRegister({ ...ok, password: 'abc', confirmPassword: 'abd' })).toBe('Passwords do not match');
  });
  it('needs at least 6 characters', () => {
    expect(validateRegister({ ...ok, password: 'abcde', confirmPassword: 'abcde' })).toBe('Password must be at least 6 characters long');
    expect(validateRegister(ok)).toBeNull();
  });
});

describe('password change rules', () => {
  const ok = { currentPassword: 'old-pass', newPassword: 'new-pass-1', confirmPassword: 'new-pass-1' };
  it('needs all three fields', () => {
    for (const key of Object.keys(ok) as (keyof typeof ok)[]) {
      expect(validatePasswordChange({ ...ok, [key]: '' })).toBe('Please fill in all password fields');
    }
  });
  it('new and confirm must match', () => {
    expect(validatePasswordChange({ ...ok, confirmPassword: 'new-pass-2' })).toBe('New passwords do not match');
  });
  it('new password needs 8 characters', () => {
    expect(validatePasswordChange({ ...ok, newPassword: '1234567', confirmPassword: '1234567' })).toBe('New password must be at least 8 characters');
    expect(validatePasswordChange({ ...ok, newPassword: '12345678', confirmPassword: '12345678' })).toBeNull();
  });
});

describe('profile update sends only changes', () => {
  it('nothing when unchanged', () => {
    expect(profileChanges({ firstName: 'Ada', lastName: null }, { firstName: 'Ada', lastName: '' })).toEqual({});
  });
  it('only the changed name', () => {
    expect(profileChanges({ firstName: 'Ada', lastName: 'L' }, { firstName: 'Ada', lastName: 'Lovelace' })).toEqual({ lastName: 'Lovelace' });
    expect(profileChanges({ firstName: null, lastName: 'L' }, { firstName: 'Grace', lastName: 'L' })).toEqual({ firstName: 'Grace' });
  });
});
