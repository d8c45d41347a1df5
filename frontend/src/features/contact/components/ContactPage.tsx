import { useState, type FormEvent } from 'react';
import { toast } from 'react-toastify';
import { Container } from '../../../components/Layout';
import { Alert, Spinner } from '../../../components/ui';
import { FieldError, FormAlert, fieldProps, formErrors, hasErrors, type FormErrors } from '../../../lib/form-errors';
import { CONTACT_MESSAGE_MIN } from '../../../lib/constants';
import { useAuth } from '../../../lib/auth/AuthProvider';
import { CONTACT_FIELDS, sendContact, validateContact } from '../api';

export default function ContactPage() {
  const { user } = useAuth();
  const [form, setForm] = useState({
    name: [user?.firstName, user?.lastName].filter(Boolean).join(' '), email: user?.email ?? '', subject: '', message: '',
  });
  const [sending, setSending] = useState(false);
  const [sent, setSent] = useState<string | null>(null);
  const [errors, setErrors] = useState<FormErrors>({});
  const set = (k: keyof typeof form) => (e: React.ChangeEvent<HTMLInputElement | HTMLTextAreaElement>) => setForm((f) => ({ ...f, [k]: e.target.value }));

  const onSubmit = async (e: FormEvent) => {
    e.preventDefault();
    const found = validateContact(form);
    setErrors(found);
    if (hasErrors(found)) return;
    setSending(true);
    try {
      const res = await sendContact(form);
      const text = res.message || 'Thank you for your message. We will get back to you within 24 hours.';
      setSent(text);
      toast.success(text);
      setForm((f) => ({ ...f, subject: '', message: '' }));
    } catch (error) {
      setErrors(formErrors(error, CONTACT_FIELDS, 'Failed to send your message. Please try again.'));
    } finally {
      setSending(false);
    }
  };

  return (
    <Container>
      <div className="grid gap-10 lg:grid-cols-5">
        <div className="lg:col-span-2">
          <h1 className="text-3xl font-bold tracking-tight text-slate-900 sm:text-4xl">Contact us</h1>
          <p className="mt-4 text-slate-600">Questions, feedback, or an Enterprise plan for your team? Send us a message.</p>
          <dl className="mt-8 space-y-6 text-sm">
            <div><dt className="font-semibold text-slate-900">Support</dt><dd className="mt-1 text-slate-600">We reply within 24 hours.</dd></div>
            <div><dt className="font-semibold text-slate-900">Enterprise sales</dt><dd className="mt-1 text-slate-600">We answer within 1 business day: custom rules, on-premise deployment, SLA.</dd></div>
          </dl>
        </div>
        <form onSubmit={onSubmit} noValidate className="card space-y-5 p-6 sm:p-8 lg:col-span-3" aria-label="Contact form">
          {sent && <Alert tone="success">{sent}</Alert>}
          <FormAlert errors={errors} />
          <div className="grid gap-5 sm:grid-cols-2">
            <div><label htmlFor="name" className="label">Name</label><input id="name" autoComplete="name" className="input" value={form.name} onChange={set('name')} required {...fieldProps(errors, 'name')} /><FieldError errors={errors} field="name" /></div>
            <div><label htmlFor="email" className="label">Email</label><input id="email" type="email" autoComplete="email" className="input" value={form.email} onChange={set('email')} required {...fieldProps(errors, 'email')} /><FieldError errors={errors} field="email" /></div>
          </div>
          <div><label htmlFor="subject" className="label">Subject</label><input id="subject" className="input" value={form.subject} onChange={set('subject')} required {...fieldProps(errors, 'subject')} /><FieldError errors={errors} field="subject" /></div>
          <div><label htmlFor="message" className="label">Message</label><textarea id="message" rows={6} className="input" value={form.message} onChange={set('message')} required minLength={CONTACT_MESSAGE_MIN}
            {...fieldProps(errors, 'message', 'message-help')} />
            <p id="message-help" className="mt-1 text-xs text-slate-500">At least {CONTACT_MESSAGE_MIN} characters.</p>
            <FieldError errors={errors} field="message" /></div>
          <button type="submit" className="btn-primary" disabled={sending}>{sending && <Spinner label="Sending" className="h-4 w-4" />}Send message</button>
        </form>
      </div>
    </Container>
  );
}
