import { Suspense, type ReactNode } from 'react';
import { Route, Routes } from 'react-router-dom';
import { Layout } from '../components/Layout';
import { NotFoundPage } from '../components/NotFound';
import { ProtectedRoute } from '../components/ProtectedRoute';
import { PageSpinner } from '../components/ui';
import { lazyPage } from '../lib/lazy';
import { HomePage } from '../features/marketing/components/HomePage';

const PricingPage = lazyPage(() => import('../features/marketing/components/PricingPage'));
const AboutPage = lazyPage(() => import('../features/marketing/components/AboutPage'));
const HelpPage = lazyPage(() => import('../features/marketing/components/HelpPage'));
const PrivacyPage = lazyPage(() => import('../features/marketing/components/PrivacyPage'));
const TermsPage = lazyPage(() => import('../features/marketing/components/TermsPage'));
const ContactPage = lazyPage(() => import('../features/contact/components/ContactPage'));
const LoginPage = lazyPage(() => import('../features/auth/components/LoginPage'));
const RegisterPage = lazyPage(() => import('../features/auth/components/RegisterPage'));
const ForgotPasswordPage = lazyPage(() => import('../features/auth/components/ForgotPasswordPage'));
const ResetPasswordPage = lazyPage(() => import('../features/auth/components/ResetPasswordPage'));
const VerifyEmailPage = lazyPage(() => import('../features/auth/components/VerifyEmailPage'));
const AuthCallbackPage = lazyPage(() => import('../features/auth/components/AuthCallbackPage'));
const UploadPage = lazyPage(() => import('../features/upload/components/UploadPage'));
const StatusPage = lazyPage(() => import('../features/files/components/StatusPage'));
const DownloadPage = lazyPage(() => import('../features/files/components/DownloadPage'));
const DashboardPage = lazyPage(() => import('../features/dashboard/components/DashboardPage'));
const ProfilePage = lazyPage(() => import('../features/profile/components/ProfilePage'));
const HistoryPage = lazyPage(() => import('../features/history/components/HistoryPage'));
const AdminPage = lazyPage(() => import('../features/admin/components/AdminPage'));
const PoliciesPage = lazyPage(() => import('../features/policies/components/PoliciesPage'));
const ReportsPage = lazyPage(() => import('../features/reports/components/ReportsPage'));

const guard = (node: ReactNode) => <ProtectedRoute>{node}</ProtectedRoute>;

export function AppRoutes() {
  return (
    <Suspense fallback={<PageSpinner />}>
      <Routes>
        <Route element={<Layout />}>
          <Route index element={<HomePage />} />
          <Route path="pricing" element={<PricingPage />} />
          <Route path="about" element={<AboutPage />} />
          <Route path="help" element={<HelpPage />} />
          <Route path="privacy" element={<PrivacyPage />} />
          <Route path="terms" element={<TermsPage />} />
          <Route path="contact" element={<ContactPage />} />
          <Route path="login" element={<LoginPage />} />
          <Route path="register" element={<RegisterPage />} />
          <Route path="forgot-password" element={<ForgotPasswordPage />} />
          <Route path="reset-password" element={<ResetPasswordPage />} />
          <Route path="verify-email" element={<VerifyEmailPage />} />
          <Route path="auth/callback" element={<AuthCallbackPage />} />
          <Route path="upload" element={guard(<UploadPage />)} />
          <Route path="status" element={guard(<StatusPage />)} />
          <Route path="status/:fileId" element={guard(<StatusPage />)} />
          <Route path="download" element={guard(<DownloadPage />)} />
          <Route path="download/:fileId" element={guard(<DownloadPage />)} />
          <Route path="dashboard" element={guard(<DashboardPage />)} />
          <Route path="profile" element={guard(<ProfilePage />)} />
          <Route path="history" element={guard(<HistoryPage />)} />
          <Route path="admin" element={guard(<AdminPage />)} />
          <Route path="policies" element={guard(<PoliciesPage />)} />
          <Route path="reports" element={guard(<ReportsPage />)} />
          <Route path="*" element={<NotFoundPage />} />
        </Route>
      </Routes>
    </Suspense>
  );
}
