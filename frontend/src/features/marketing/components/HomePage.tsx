import { useEffect, useRef } from 'react';
import { Link } from 'react-router-dom';
import { toast } from 'react-toastify';
import { useAuth } from '../../../lib/auth/AuthProvider';
import { newAccountPlan, uploadsInWords, usePlans } from '../../../lib/plans';
import { useUploadInfo } from '../../../lib/upload-info';
import { ShieldIcon } from '../../../components/ui';

const FEATURES = [
  { title: 'Secure Processing', text: 'Every file is parsed in an isolated container with no network access. Files are auto-deleted after 24 hours.', icon: 'M12 3l7 3v5c0 4.5-3 8.4-7 10-4-1.6-7-5.5-7-10V6l7-3z' },
  { title: 'Fast & Efficient', text: 'Clean documents come back in minutes, not hours, even in batches.', icon: 'M13 2L4 14h7l-1 8 9-12h-7l1-8z' },
  { title: 'Mobile Friendly', text: 'Upload, follow and download from any device, phone to desktop.', icon: 'M8 2h8a2 2 0 012 2v16a2 2 0 01-2 2H8a2 2 0 01-2-2V4a2 2 0 012-2zm3 17h2' },
  { title: 'Multiple Formats', text: 'PDF, Office documents, OpenDocument, images and more, rebuilt in a safe form.', icon: 'M4 4h10l6 6v10a2 2 0 01-2 2H4a2 2 0 01-2-2V6a2 2 0 012-2zm10 0v6h6' },
];

export function HomePage() {
  const { isAuthenticated, isLoading } = useAuth();
  const info = useUploadInfo(!isLoading && isAuthenticated);
  const warned = useRef(false);
  // What a new account gets is the plan table's newAccountRole entry (GET /api/plans).
  const plans = usePlans();
  const starter = newAccountPlan(plans.data);

  useEffect(() => {
    if (info.isError && isAuthenticated && !warned.current) {
      warned.current = true;
      toast.error('Unable to connect to the server. Please try again later.');
    }
  }, [info.isError, isAuthenticated]);

  return (
    <>
      <section className="relative overflow-hidden bg-gradient-to-b from-brand-900 via-brand-800 to-brand-700 text-white">
        <div aria-hidden="true" className="absolute inset-0 bg-[radial-gradient(circle_at_30%_20%,rgba(255,255,255,0.12),transparent_45%)]" />
        <div className="relative mx-auto max-w-7xl px-4 py-20 sm:px-6 sm:py-28 lg:px-8">
          <div className="max-w-3xl">
            <p className="inline-flex items-center gap-2 rounded-full bg-white/10 px-3 py-1 text-xs font-semibold uppercase tracking-wider text-brand-100">
              <ShieldIcon className="h-4 w-4" /> Content disarm & reconstruction
            </p>
            <h1 className="mt-6 text-4xl font-extrabold tracking-tight sm:text-6xl">Secure File Sanitization</h1>
            <p className="mt-6 text-lg text-brand-100 sm:text-xl">
              Remove macros, scripts, embedded objects and hidden metadata from documents and images. Every file is rebuilt in an isolated sandbox without network access, and you get back a clean copy that looks the same.
            </p>
            <div className="mt-10 flex flex-col gap-3 sm:flex-row">
              {isAuthenticated ? (
                <>
                  <Link to="/upload" className="btn bg-white px-6 py-3 text-base text-brand-800 hover:bg-brand-50">Upload Files</Link>
                  <Link to="/dashboard" className="btn border border-white/40 px-6 py-3 text-base text-white hover:bg-white/10">Dashboard</Link>
                </>
              ) : (
                <>
                  <Link to="/register" className="btn bg-white px-6 py-3 text-base text-brand-800 hover:bg-brand-50">Get Started Free</Link>
                  <Link to="/pricing" className="btn border border-white/40 px-6 py-3 text-base text-white hover:bg-white/10">View Pricing</Link>
                </>
              )}
            </div>
            {!isAuthenticated && (
              <p className="mt-6 text-sm text-brand-100">Already have an account? <Link to="/login" className="font-semibold text-white underline underline-offset-2">Sign in</Link></p>
            )}
          </div>
        </div>
      </section>

      {isAuthenticated && info.data && (
        <section aria-label="Upload limits" className="mx-auto -mt-10 max-w-5xl px-4 sm:px-6 lg:px-8">
          <div className="card relative grid gap-4 p-6 sm:grid-cols-3" data-testid="upload-info-panel">
            <div><p className="text-sm text-slate-500">Maximum File Size</p><p className="text-2xl font-bold text-slate-900">{info.data.maxFileSizeMB} MB</p></div>
            <div><p className="text-sm text-slate-500">Supported Formats</p><p className="text-2xl font-bold text-slate-900">{info.data.supportedFormats?.length ?? 0}+</p></div>
            <div><p className="text-sm text-slate-500">Batch Upload</p><p className="text-2xl font-bold text-slate-900">{info.data.maxFiles} files</p></div>
          </div>
        </section>
      )}

      <section className="mx-auto max-w-7xl px-4 py-20 sm:px-6 lg:px-8">
        <div className="mx-auto max-w-2xl text-center">
          <h2 className="text-3xl font-bold tracking-tight text-slate-900">Built for files you cannot trust</h2>
          <p className="mt-4 text-slate-600">Attachments, downloads and customer uploads carry active content. Sanitas strips it out before it reaches anyone.</p>
        </div>
        <div className="mt-12 grid gap-6 sm:grid-cols-2 lg:grid-cols-4">
          {FEATURES.map((f) => (
            <div key={f.title} className="card p-6">
              <span className="flex h-11 w-11 items-center justify-center rounded-xl bg-brand-50 text-brand-700">
                <svg className="h-6 w-6" viewBox="0 0 24 24" fill="none" stroke="currentColor" strokeWidth="2" strokeLinejoin="round" aria-hidden="true"><path d={f.icon} /></svg>
              </span>
              <h3 className="mt-4 font-semibold text-slate-900">{f.title}</h3>
              <p className="mt-2 text-sm text-slate-600">{f.text}</p>
            </div>
          ))}
        </div>
      </section>

      <section className="bg-white">
        <div className="mx-auto flex max-w-7xl flex-col items-start gap-6 px-4 py-16 sm:px-6 lg:flex-row lg:items-center lg:justify-between lg:px-8">
          {isAuthenticated ? (
            <>
              <div>
                <h2 className="text-2xl font-bold text-slate-900">Ready to clean your next file?</h2>
                <p className="mt-2 text-slate-600">Drop it in and follow its status live. The clean copy is ready in minutes.</p>
              </div>
              <Link to="/upload" className="btn-primary px-6 py-3 text-base">Upload Files</Link>
            </>
          ) : (
            <>
              <div>
                <h2 className="text-2xl font-bold text-slate-900">Start sanitizing files for free</h2>
                <p className="mt-2 text-slate-600" data-testid="new-account-promise">
                  {starter ? `${uploadsInWords(starter.limits)} on the ${starter.label} plan. ` : ''}No credit card required.
                </p>
              </div>
              <Link to="/register" className="btn-primary px-6 py-3 text-base">Create your free account</Link>
            </>
          )}
        </div>
      </section>
    </>
  );
}
