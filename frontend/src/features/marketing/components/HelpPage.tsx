import { Link } from 'react-router-dom';
import { Container } from '../../../components/Layout';

export const HELP_FAQ = [
  { q: 'What does file sanitization do?', a: 'It removes active content (macros, scripts, embedded objects, remote references) and hidden metadata from a file and rebuilds it, so the visible content stays and the threats do not.' },
  { q: 'Which file formats can I upload?', a: 'PDF, Office documents, OpenDocument files, common images and more. The upload page shows the exact list and limits for your account.' },
  { q: 'How long does processing take?', a: 'Typical processing takes 1-5 minutes, depending on the size and complexity of the file and the current queue.' },
  { q: 'How do I check the status of my file?', a: 'After uploading, select View Status next to the file, or open File History. The status page refreshes on its own until the file is ready.' },
  { q: 'How do I download the sanitized file?', a: 'When the status shows COMPLETED, choose Download. The clean file is saved under its sanitized name.' },
  { q: 'How long are my files kept?', a: 'Original and sanitized files are deleted automatically 24 hours after upload. Your history keeps the record without the file.' },
  { q: 'Why did my file fail?', a: 'Files that are damaged, encrypted, or not what their name says cannot be rebuilt safely and are rejected with a reason shown on the status page.' },
  { q: 'Is my data private?', a: 'Files are processed in isolated containers without network access and are never shared. See the Privacy Policy for details.' },
  { q: 'What are the upload limits?', a: 'Each plan has a monthly file quota and a maximum size per file. Your dashboard shows how much of this month\'s quota you have used.' },
  { q: 'How do I upgrade my plan?', a: 'See the Pricing page. For Enterprise features such as custom rules and on-premise deployment, contact sales.' },
];

const QUICK = [
  { to: '/upload', title: 'Upload files', text: 'Start sanitizing documents and images.' },
  { to: '/status', title: 'Check status', text: 'Follow a file while it is processed.' },
  { to: '/download', title: 'Download files', text: 'Get the clean copy of a finished file.' },
];

export default function HelpPage() {
  return (
    <Container>
      <div className="max-w-2xl">
        <h1 className="text-3xl font-bold tracking-tight text-slate-900 sm:text-4xl">Help Center</h1>
        <p className="mt-3 text-lg text-slate-600">Answers to common questions, and how to reach us when you need a person.</p>
      </div>
      <nav aria-label="Help topics" className="mt-10 grid gap-4 sm:grid-cols-3">
        {QUICK.map((q) => (
          <Link key={q.to} to={q.to} className="card block p-5 transition hover:border-brand-600 hover:shadow-md">
            <p className="font-semibold text-slate-900">{q.title}</p>
            <p className="mt-1 text-sm text-slate-600">{q.text}</p>
          </Link>
        ))}
      </nav>
      <div className="mt-14 grid gap-10 lg:grid-cols-3">
        <section className="lg:col-span-2" aria-labelledby="help-faq">
          <h2 id="help-faq" className="text-2xl font-bold text-slate-900">Frequently asked questions</h2>
          <div className="mt-6 space-y-3">
            {HELP_FAQ.map((item) => (
              <details key={item.q} className="card group p-5 [&_summary::-webkit-details-marker]:hidden">
                <summary className="flex cursor-pointer list-none items-center justify-between gap-4 font-semibold text-slate-900">
                  {item.q}
                  <span aria-hidden="true" className="text-slate-400 transition group-open:rotate-45">+</span>
                </summary>
                <p className="mt-3 text-slate-600">{item.a}</p>
              </details>
            ))}
          </div>
        </section>
        <aside className="space-y-4" aria-label="Contact support">
          <div className="card p-5">
            <h2 className="font-semibold text-slate-900">Email support</h2>
            <p className="mt-1 text-sm text-slate-600">We reply within 24 hours.</p>
            <Link to="/contact" className="link mt-3 inline-block text-sm">Send us a message</Link>
          </div>
          <div className="card p-5">
            <h2 className="font-semibold text-slate-900">Enterprise sales</h2>
            <p className="mt-1 text-sm text-slate-600">We answer within 1 business day.</p>
            <Link to="/contact" className="link mt-3 inline-block text-sm">Contact sales</Link>
          </div>
          <div className="card p-5">
            <h2 className="font-semibold text-slate-900">More information</h2>
            <ul className="mt-2 space-y-1 text-sm">
              <li><Link className="link" to="/about">About Sanitas</Link></li>
              <li><Link className="link" to="/privacy">Privacy Policy</Link></li>
              <li><Link className="link" to="/terms">Terms of Service</Link></li>
            </ul>
          </div>
        </aside>
      </div>
    </Container>
  );
}
