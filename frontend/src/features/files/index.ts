/** What the files feature offers the others: the sanitization report of a file, and a SHA-256
 * digest with its copy button. */
export { FindingsReport, kindLabel } from './components/FindingsReport';
export { HashValue } from './components/HashValue';
