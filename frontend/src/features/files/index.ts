/** What the files feature offers the others: the sanitization report of a file. */
export { FindingsReport, kindLabel } from './components/FindingsReport';
