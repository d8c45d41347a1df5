import { Link } from 'react-router-dom';
import { Container } from '../../../components/Layout';

const STEPS = [
  { title: 'Upload', text: 'You upload a file over an encrypted connection. We check its real type from its content, not its name.' },
  { title: 'Disarm', text: 'A sandbox with no network, no access to other files and strict limits opens it and removes macros, scripts, embedded objects, remote references and metadata.' },
  { title: 'Rebuild', text: 'The visible content is rebuilt into a clean file of the same kind, or flattened into a safe PDF in advanced mode.' },
  { title: 'Download', text: 'You download the clean copy and a report of everything that was removed. Both files are deleted after 24 hours.' },
];

export default function AboutPage() {
  return (
    <Container narrow>
      <h1 className="text-3xl font-bold tracking-tight text-slate-900 sm:text-4xl">About Sanitas</h1>
      <section className="mt-8">
        <h2 className="text-xl font-semibold text-slate-900">Our mission</h2>
        <p className="mt-3 text-slate-600">
          Documents are the most common way attacks reach people: a macro in an invoice, JavaScript in a PDF, a tracking pixel in an image. Antivirus looks for known threats; Sanitas assumes every file is hostile and rebuilds it, keeping what you can see and dropping what could run.
        </p>
      </section>
      <section className="mt-10">
        <h2 className="text-xl font-semibold text-slate-900">How it works</h2>
        <ol className="mt-4 grid gap-4 sm:grid-cols-2">
          {STEPS.map((s, i) => (
            <li key={s.title} className="card p-5">
              <span className="flex h-8 w-8 items-center justify-center rounded-full bg-brand-700 text-sm font-bold text-white">{i + 1}</span>
              <h3 className="mt-3 font-semibold text-slate-900">{s.title}</h3>
              <p className="mt-1 text-sm text-slate-600">{s.text}</p>
            </li>
          ))}
        </ol>
      </section>
      <section className="mt-10">
        <h2 className="text-xl font-semibold text-slate-900">Security features</h2>
        <ul className="mt-3 list-disc space-y-2 pl-5 text-slate-600">
          <li>Isolated containers without network access for every file</li>
          <li>Memory, CPU, file-size and time limits on each job</li>
          <li>Type detection by content; unknown or broken files are rejected, never passed through</li>
          <li>Encrypted transport and signed, short-lived access tokens</li>
        </ul>
      </section>
      <section className="mt-10">
        <h2 className="text-xl font-semibold text-slate-900">Supported formats</h2>
        <p className="mt-3 text-slate-600">PDF; Word, Excel and PowerPoint (including macro-enabled and legacy formats); OpenDocument; JPEG, PNG, GIF, TIFF, WebP and SVG images; text, CSV and archives. The upload page lists exactly what your plan accepts.</p>
      </section>
      <section className="mt-10">
        <h2 className="text-xl font-semibold text-slate-900">Privacy</h2>
        <ul className="mt-3 list-disc space-y-2 pl-5 text-slate-600">
          <li>Files are deleted automatically 24 hours after upload</li>
          <li>We never read, share or train on your documents</li>
          <li>You can self-host Sanitas and keep every byte on your own servers</li>
        </ul>
      </section>
      <div className="mt-12 rounded-2xl bg-brand-50 p-6 sm:flex sm:items-center sm:justify-between">
        <p className="font-medium text-brand-900">See it on your own files.</p>
        <Link to="/upload" className="btn-primary mt-4 sm:mt-0">Upload a file</Link>
      </div>
    </Container>
  );
}
