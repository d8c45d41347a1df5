import { Container } from '../../../components/Layout';

export default function PrivacyPage() {
  return (
    <Container narrow>
      <article className="prose-legal">
        <h1 className="text-3xl font-bold tracking-tight text-slate-900">Privacy Policy</h1>
        <p className="mt-2 text-sm text-slate-500">This policy explains what Sanitas collects, why, and for how long.</p>
        <h2>What we collect</h2>
        <ul>
          <li>Account data: your email address, optional name and username, and your password as a salted hash.</li>
          <li>Files you upload and the sanitized copies we produce, with their names, sizes and processing reports.</li>
          <li>Usage records: how many files you processed each month, to apply your plan's quota.</li>
          <li>Technical logs: IP address and browser type for security and abuse prevention.</li>
        </ul>
        <h2>How we use it</h2>
        <p>Only to provide the service: to sanitize your files, show you their status and history, enforce quotas, secure your account and answer your messages. We do not sell your data, show advertising, or use your files to train any model.</p>
        <h2>How long we keep it</h2>
        <p>Uploaded and sanitized files are deleted automatically 24 hours after upload. The history record (name, size, status) stays until you close your account. Logs are kept for up to 30 days.</p>
        <h2>Where it is processed</h2>
        <p>Files are opened only inside isolated containers without network access. Self-hosted installations keep all data on the operator's own infrastructure.</p>
        <h2>Your rights</h2>
        <p>You can see and correct your profile at any time, and ask us to export or delete your account data through the contact page.</p>
        <h2>Contact</h2>
        <p>Questions about privacy can be sent through the contact page; we reply within 24 hours.</p>
      </article>
    </Container>
  );
}
