/**
 * Errors where the eye is: each form keeps `FormErrors` (field -> message, plus `form` for what
 * belongs to no field), fills it from its own checks and from the server's 422 `fields`
 * (`formErrors`), shows each message under its input (`fieldProps` + `FieldError`: aria-invalid,
 * aria-describedby) and the rest in an alert at the top of the form (`FormAlert`, role="alert").
 * A toast may announce an event; it never is the only place an error shows.
 */
import type { ReactNode } from 'react';
import { ApiError, messageOf } from './api-client';

export type FormErrors = Partial<Record<string, string>> & { form?: string };

/** The id of the message under `field`'s input. */
export const errorId = (field: string) => `${field.replace(/[^\w-]/g, '-')}-error`;

/**
 * The errors a failed call gives a form with `known` fields: each server field error under its
 * field (a path inside a field, `rules.macros` or `allowedTypes.0`, goes to the longest known
 * prefix), everything else in `form` (the server's message, or `fallback`).
 */
export function formErrors(error: unknown, known: readonly string[], fallback: string): FormErrors {
  const out: FormErrors = {};
  const rest: string[] = [];
  const fields = error instanceof ApiError && error.status === 422 ? error.fields ?? [] : [];
  for (const f of fields) {
    const path = f.field ?? '';
    const target = [...known].sort((a, b) => b.length - a.length)
      .find((k) => path === k || path.startsWith(`${k}.`));
    if (target) out[target] = out[target] ? `${out[target]} ${f.message}` : f.message;
    else rest.push(path ? `${path}: ${f.message}` : f.message);
  }
  if (rest.length) out.form = rest.join(' ');
  else if (!fields.length) out.form = messageOf(error, fallback);
  return out;
}

/** Props for the input of `field`: aria-invalid and aria-describedby its message (and `help`). */
export function fieldProps(errors: FormErrors, field: string, help?: string) {
  const described = [help, errors[field] ? errorId(field) : undefined].filter(Boolean).join(' ');
  return { 'aria-invalid': errors[field] ? true : undefined, 'aria-describedby': described || undefined } as const;
}

/** The message under `field`'s input (nothing when it has none). */
export function FieldError({ errors, field }: { errors: FormErrors; field: string }) {
  const message = errors[field];
  return message ? <p id={errorId(field)} className="mt-1 text-sm text-red-700">{message}</p> : null;
}

/** The form's error that belongs to no field, at its top. */
export function FormAlert({ errors, children }: { errors: FormErrors; children?: ReactNode }) {
  if (!errors.form && !children) return null;
  return (
    <div role="alert" className="rounded-xl border border-red-200 bg-red-50 p-4 text-sm text-red-900" data-testid="form-alert">
      {errors.form}{children}
    </div>
  );
}

/** Whether there is anything to show. */
export const hasErrors = (errors: FormErrors) => Object.values(errors).some(Boolean);
