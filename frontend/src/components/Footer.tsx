import { Link } from 'react-router-dom';
import { ShieldIcon } from './ui';

export function Footer() {
  const year = new Date().getFullYear();
  return (
    <footer className="mt-auto border-t border-slate-200 bg-white">
      <div className="mx-auto grid max-w-7xl gap-8 px-4 py-10 sm:grid-cols-2 sm:px-6 lg:grid-cols-4 lg:px-8">
        <div className="lg:col-span-2">
          <Link to="/" className="flex items-center gap-2 font-bold text-slate-900">
            <span className="flex h-7 w-7 items-center justify-center rounded-lg bg-brand-700 text-white"><ShieldIcon className="h-4 w-4" /></span>
            Sanitas
          </Link>
          <p className="mt-3 max-w-sm text-sm text-slate-600">
            Macros, scripts and hidden metadata removed in an isolated sandbox with no network. Files are deleted automatically 24 hours after upload.
          </p>
        </div>
        <nav aria-label="Quick Links">
          <h2 className="text-sm font-semibold text-slate-900">Quick Links</h2>
          <ul className="mt-3 space-y-2 text-sm">
            <li><Link className="text-slate-600 hover:text-brand-700" to="/">Home</Link></li>
            <li><Link className="text-slate-600 hover:text-brand-700" to="/upload">Upload Files</Link></li>
            <li><Link className="text-slate-600 hover:text-brand-700" to="/about">About</Link></li>
          </ul>
        </nav>
        <nav aria-label="Support">
          <h2 className="text-sm font-semibold text-slate-900">Support</h2>
          <ul className="mt-3 space-y-2 text-sm">
            <li><Link className="text-slate-600 hover:text-brand-700" to="/help">Help Center</Link></li>
            <li><Link className="text-slate-600 hover:text-brand-700" to="/privacy">Privacy Policy</Link></li>
            <li><Link className="text-slate-600 hover:text-brand-700" to="/terms">Terms of Service</Link></li>
            <li><Link className="text-slate-600 hover:text-brand-700" to="/contact">Contact</Link></li>
          </ul>
        </nav>
      </div>
      <div className="border-t border-slate-100">
        <p className="mx-auto max-w-7xl px-4 py-4 text-xs text-slate-500 sm:px-6 lg:px-8">
          © {year} Sanitas. All rights reserved.
        </p>
      </div>
    </footer>
  );
}
