import { useEffect, useRef, useState } from 'react';
import { Link, NavLink, useLocation } from 'react-router-dom';
import { toast } from 'react-toastify';
import { displayInitial, displayName, useAuth } from '../lib/auth/AuthProvider';
import { useCan } from '../lib/plans';
import { ShieldIcon } from './ui';

const navClass = ({ isActive }: { isActive: boolean }) =>
  `rounded-md px-3 py-2 text-sm font-medium transition-colors ${isActive ? 'bg-brand-50 text-brand-800' : 'text-slate-600 hover:bg-slate-100 hover:text-slate-900'}`;
const mobileNavClass = ({ isActive }: { isActive: boolean }) =>
  `block rounded-md px-3 py-2 text-base font-medium ${isActive ? 'bg-brand-50 text-brand-800' : 'text-slate-700 hover:bg-slate-100'}`;

export function Header() {
  const { user, isAuthenticated, logout } = useAuth();
  const canAuthor = useCan('policyAuthoring');
  const canReport = useCan('reports');
  const location = useLocation();
  const [menuOpen, setMenuOpen] = useState(false);
  const [mobileOpen, setMobileOpen] = useState(false);
  const menuRef = useRef<HTMLDivElement>(null);

  useEffect(() => {
    setMenuOpen(false);
    setMobileOpen(false);
  }, [location.pathname]);

  useEffect(() => {
    if (!menuOpen) return;
    const onClick = (e: MouseEvent) => {
      if (menuRef.current && !menuRef.current.contains(e.target as Node)) setMenuOpen(false);
    };
    const onKey = (e: KeyboardEvent) => { if (e.key === 'Escape') setMenuOpen(false); };
    document.addEventListener('mousedown', onClick);
    document.addEventListener('keydown', onKey);
    return () => {
      document.removeEventListener('mousedown', onClick);
      document.removeEventListener('keydown', onKey);
    };
  }, [menuOpen]);

  const handleSignOut = async () => {
    setMenuOpen(false);
    setMobileOpen(false);
    const ok = await logout('/');
    if (ok) {
      toast.success('Logged out successfully');
    } else {
      toast.error('Error logging out');
    }
  };

  const links = [
    { to: '/', label: 'Home', end: true },
    { to: '/pricing', label: 'Pricing' },
    { to: '/about', label: 'About' },
    ...(isAuthenticated ? [
      { to: '/upload', label: 'Upload' },
      { to: '/history', label: 'History' },
      { to: '/dashboard', label: 'Dashboard' },
    ] : []),
    // Custom policies and compliance reports: only plans that include them see them.
    ...(canAuthor ? [{ to: '/policies', label: 'Policies' }] : []),
    ...(canReport ? [{ to: '/reports', label: 'Reports' }] : []),
    ...(isAuthenticated && user?.role === 'ADMIN' ? [{ to: '/admin', label: 'Admin' }] : []),
  ];

  return (
    <header className="sticky top-0 z-40 border-b border-slate-200 bg-white/90 backdrop-blur">
      <a href="#main" className="sr-only focus:not-sr-only focus:absolute focus:left-2 focus:top-2 focus:z-50 focus:rounded focus:bg-white focus:px-3 focus:py-2">
        Skip to content
      </a>
      <div className="mx-auto flex h-16 max-w-7xl items-center justify-between gap-4 px-4 sm:px-6 lg:px-8">
        <Link to="/" className="flex items-center gap-2 text-lg font-bold text-slate-900">
          <span className="flex h-8 w-8 items-center justify-center rounded-lg bg-brand-700 text-white"><ShieldIcon className="h-5 w-5" /></span>
          Sanitas
        </Link>
        <nav aria-label="Main" className="hidden items-center gap-1 md:flex">
          {links.map((l) => <NavLink key={l.to} to={l.to} end={l.end} className={navClass}>{l.label}</NavLink>)}
        </nav>
        <div className="hidden items-center gap-2 md:flex">
          {isAuthenticated ? (
            <div className="relative" ref={menuRef}>
              <button type="button" onClick={() => setMenuOpen((o) => !o)} aria-haspopup="menu" aria-expanded={menuOpen}
                className="flex items-center gap-2 rounded-full py-1 pl-1 pr-3 hover:bg-slate-100">
                <span aria-hidden="true" className="flex h-8 w-8 items-center justify-center rounded-full bg-brand-700 text-sm font-semibold text-white">
                  {displayInitial(user)}
                </span>
                <span className="text-sm font-medium text-slate-700" data-testid="user-menu-name">{displayName(user)}</span>
                {/* The name read out starts with the visible text (WCAG 2.5.3). */}
                <span className="sr-only">, user menu</span>
                <svg className="h-4 w-4 text-slate-400" viewBox="0 0 20 20" fill="currentColor" aria-hidden="true"><path d="M5.2 7.2a.75.75 0 011.06 0L10 10.94l3.74-3.74a.75.75 0 111.06 1.06l-4.27 4.27a.75.75 0 01-1.06 0L5.2 8.26a.75.75 0 010-1.06z" /></svg>
              </button>
              {menuOpen && (
                <div role="menu" className="absolute right-0 mt-2 w-56 overflow-hidden rounded-xl border border-slate-200 bg-white py-1 shadow-lg">
                  <div className="border-b border-slate-100 px-4 py-2">
                    <p className="truncate text-sm font-medium text-slate-900">{displayName(user)}</p>
                    <p className="truncate text-xs text-slate-500">{user?.email}</p>
                  </div>
                  <Link role="menuitem" to="/dashboard" className="block px-4 py-2 text-sm text-slate-700 hover:bg-slate-50">Dashboard</Link>
                  <Link role="menuitem" to="/history" className="block px-4 py-2 text-sm text-slate-700 hover:bg-slate-50">File History</Link>
                  <Link role="menuitem" to="/profile" className="block px-4 py-2 text-sm text-slate-700 hover:bg-slate-50">Profile Settings</Link>
                  <button role="menuitem" type="button" onClick={handleSignOut} className="block w-full px-4 py-2 text-left text-sm text-red-600 hover:bg-red-50">Sign out</button>
                </div>
              )}
            </div>
          ) : (
            <>
              <Link to="/login" className="btn-ghost">Sign in</Link>
              <Link to="/register" className="btn-primary">Sign up</Link>
            </>
          )}
        </div>
        <button type="button" className="rounded-md p-2 text-slate-700 hover:bg-slate-100 md:hidden" aria-label={mobileOpen ? 'Close menu' : 'Open menu'}
          aria-expanded={mobileOpen} aria-controls="mobile-menu" onClick={() => setMobileOpen((o) => !o)}>
          <svg className="h-6 w-6" viewBox="0 0 24 24" fill="none" stroke="currentColor" strokeWidth="2" aria-hidden="true">
            {mobileOpen ? <path d="M6 6l12 12M6 18L18 6" strokeLinecap="round" /> : <path d="M4 7h16M4 12h16M4 17h16" strokeLinecap="round" />}
          </svg>
        </button>
      </div>
      {mobileOpen && (
        <div id="mobile-menu" className="border-t border-slate-200 bg-white md:hidden">
          <nav aria-label="Mobile" className="space-y-1 px-4 py-3">
            {links.map((l) => <NavLink key={l.to} to={l.to} end={l.end} className={mobileNavClass}>{l.label}</NavLink>)}
          </nav>
          <div className="border-t border-slate-200 px-4 py-3">
            {isAuthenticated ? (
              <>
                <div className="mb-2 flex items-center gap-3 px-3">
                  <span aria-hidden="true" className="flex h-9 w-9 items-center justify-center rounded-full bg-brand-700 font-semibold text-white">{displayInitial(user)}</span>
                  <div className="min-w-0">
                    <p className="truncate font-medium text-slate-900">{displayName(user)}</p>
                    <p className="truncate text-sm text-slate-500">{user?.email}</p>
                  </div>
                </div>
                <NavLink to="/dashboard" className={mobileNavClass}>Dashboard</NavLink>
                <NavLink to="/history" className={mobileNavClass}>File History</NavLink>
                <NavLink to="/profile" className={mobileNavClass}>Profile Settings</NavLink>
                <button type="button" onClick={handleSignOut} className="block w-full rounded-md px-3 py-2 text-left text-base font-medium text-red-600 hover:bg-red-50">Sign out</button>
              </>
            ) : (
              <div className="flex gap-2">
                <Link to="/login" className="btn-secondary flex-1">Sign in</Link>
                <Link to="/register" className="btn-primary flex-1">Sign up</Link>
              </div>
            )}
          </div>
        </div>
      )}
    </header>
  );
}
