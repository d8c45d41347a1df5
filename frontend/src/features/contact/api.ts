import { post } from '../../lib/api-client';

export interface ContactInput { name: string; email: string; subject: string; message: string }

export function validateContact(v: ContactInput): string | null {
  if (!v.name.trim() || !v.email.trim() || !v.subject.trim() || !v.message.trim()) return 'Please fill in all fields';
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(v.email.trim())) return 'Please enter a valid email address';
  return null;
}

export const sendContact = (v: ContactInput) =>
  post<{ id: string }>('/api/contact', { name: v.name.trim(), email: v.email.trim(), subject: v.subject.trim(), message: v.message.trim() });
