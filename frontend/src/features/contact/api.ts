import { api, type ApiBody } from '../../lib/api';
import { CONTACT_MESSAGE_MIN } from '../../lib/constants';
import type { FormErrors } from '../../lib/form-errors';

export type ContactInput = ApiBody<'/api/contact', 'post'>;

/** The form's own checks, per field (the server's rules: every field required, a valid address,
 * a message of at least CONTACT_MESSAGE_MIN characters). */
export function validateContact(v: ContactInput): FormErrors {
  const errors: FormErrors = {};
  for (const k of ['name', 'email', 'subject', 'message'] as const) if (!v[k].trim()) errors[k] = 'This field is required.';
  if (!errors.email && !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(v.email.trim())) errors.email = 'Please enter a valid email address';
  if (!errors.message && v.message.trim().length < CONTACT_MESSAGE_MIN) errors.message = `Must be at least ${CONTACT_MESSAGE_MIN} characters.`;
  return errors;
}
export const CONTACT_FIELDS = ['name', 'email', 'subject', 'message'] as const;

export const sendContact = (v: ContactInput) =>
  api('post', '/api/contact', { body: { name: v.name.trim(), email: v.email.trim(), subject: v.subject.trim(), message: v.message.trim() } });
