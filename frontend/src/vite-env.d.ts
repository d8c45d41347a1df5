/// <reference types="vite/client" />

interface ImportMetaEnv {
  /** Where the API lives when the web app is served from elsewhere (default: same origin). */
  readonly VITE_API_BASE_URL?: string;
}
