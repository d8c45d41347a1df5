/** What the files feature offers the others: the sanitization report of a file, a SHA-256
 * digest with its copy button, and the "Download all" button. */
export { FindingsReport, kindLabel } from './components/FindingsReport';
export { HashValue } from './components/HashValue';
export { DownloadAllButton } from './components/DownloadAllButton';
