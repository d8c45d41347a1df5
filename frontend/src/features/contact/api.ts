import { api, type ApiBody } from '../../lib/api';

export type ContactInput = ApiBody<'/api/contact', 'post'>;

export function validateContact(v: ContactInput): string | null {
  if (!v.name.trim() || !v.email.trim() || !v.subject.trim() || !v.message.trim()) return 'Please fill in all fields';
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(v.email.trim())) return 'Please enter a valid email address';
  return null;
}

export const sendContact = (v: ContactInput) =>
  api('post', '/api/contact', { body: { name: v.name.trim(), email: v.email.trim(), subject: v.subject.trim(), message: v.message.trim() } });
