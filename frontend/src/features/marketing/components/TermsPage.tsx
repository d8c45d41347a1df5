import { Container } from '../../../components/Layout';

export default function TermsPage() {
  return (
    <Container narrow>
      <article className="prose-legal">
        <h1 className="text-3xl font-bold tracking-tight text-slate-900">Terms of Service</h1>
        <p className="mt-2 text-sm text-slate-500">By creating an account or uploading a file you agree to these terms.</p>
        <h2>The service</h2>
        <p>Sanitas removes active content and metadata from files you upload and returns sanitized copies. Sanitization reduces risk; it cannot guarantee that a file is free of every possible threat, and you remain responsible for how you use the results.</p>
        <h2>Your account</h2>
        <ul>
          <li>Keep your password secret; you are responsible for activity under your account.</li>
          <li>Give accurate information and keep your email address reachable.</li>
        </ul>
        <h2>Acceptable use</h2>
        <ul>
          <li>Upload only files you have the right to process.</li>
          <li>Do not attempt to break out of, probe or overload the processing sandbox.</li>
          <li>Do not use the service to distribute unlawful content.</li>
        </ul>
        <h2>Plans, billing and refunds</h2>
        <p>Paid plans renew each billing period until cancelled. You may cancel at any time and keep access until the end of the period. Paid plans carry a 30-day money-back guarantee.</p>
        <h2>Retention</h2>
        <p>Files are deleted 24 hours after upload. Download your sanitized copies before then.</p>
        <h2>Liability</h2>
        <p>The service is provided as is. To the extent the law allows, our liability is limited to the fees you paid in the twelve months before a claim.</p>
        <h2>Changes</h2>
        <p>We may update these terms and will notify you by email of material changes.</p>
      </article>
    </Container>
  );
}
