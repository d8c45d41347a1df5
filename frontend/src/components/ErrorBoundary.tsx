import { Component, type ErrorInfo, type ReactNode } from 'react';

interface State { error: Error | null }

export class ErrorBoundary extends Component<{ children: ReactNode }, State> {
  state: State = { error: null };

  static getDerivedStateFromError(error: Error): State {
    return { error };
  }

  componentDidCatch(error: Error, info: ErrorInfo) {
    console.error('Unhandled UI error', error, info.componentStack);
  }

  render() {
    if (!this.state.error) return this.props.children;
    return (
      <div role="alert" className="flex min-h-screen items-center justify-center bg-slate-50 px-4">
        <div className="card max-w-md p-8 text-center">
          <div className="mx-auto flex h-12 w-12 items-center justify-center rounded-full bg-red-100 text-2xl text-red-600" aria-hidden="true">!</div>
          <h1 className="mt-4 text-xl font-bold text-slate-900">Oops! Something went wrong</h1>
          <p className="mt-2 text-sm text-slate-600">An unexpected error occurred. Reloading the page usually fixes it.</p>
          <button type="button" className="btn-primary mt-6" onClick={() => window.location.reload()}>Reload Page</button>
        </div>
      </div>
    );
  }
}
