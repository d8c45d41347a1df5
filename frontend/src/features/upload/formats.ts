/**
 * Upload refusals in words (docs/web-upload.md). The server lists every extension it accepts
 * (`supportedFormats`, about a hundred); people think in kinds of file. The kinds below group
 * the extensions a person would recognise; which kinds are shown is derived from the server's
 * list (a kind with none of its extensions supported is not named, and an extension no kind
 * knows is named on its own), so a format the server adds is never refused by this table.
 */
import type { FileError, FileRejection } from 'react-dropzone';
import { formatBytes } from '../../lib/format';
import type { UploadInfo } from '../../lib/types';

export interface FormatFamily {
  id: string;
  /** The kind in a list of kinds ("documents"). */
  label: string;
  extensions: readonly string[];
}

/** Kinds of file, in the order they are named; extensions without the dot. */
export const FORMAT_FAMILIES: readonly FormatFamily[] = [
  { id: 'documents', label: 'documents', extensions: ['pdf', 'doc', 'docx', 'docm', 'dot', 'dotx', 'dotm', 'odt', 'ott', 'rtf', 'odg', 'otg', 'odf', 'xps', 'oxps', 'vsdx', 'vsdm', 'vssx', 'vssm', 'vstx', 'vstm', 'wri', 'pub', 'vsd', 'vss', 'vst', 'wpd', 'wp', 'wp5', 'wp6', 'wpt', 'wps'] },
  { id: 'spreadsheets', label: 'spreadsheets', extensions: ['xls', 'xlsx', 'xlsm', 'xlsb', 'xlt', 'xltx', 'xltm', 'ods', 'ots', 'csv', 'tsv', 'wk1', 'wks', 'wk3', 'wk4', '123', 'wq1'] },
  { id: 'presentations', label: 'presentations', extensions: ['ppt', 'pptx', 'pptm', 'pot', 'potx', 'potm', 'pps', 'ppsx', 'ppsm', 'odp', 'otp'] },
  { id: 'images', label: 'images', extensions: ['jpg', 'jpeg', 'jpe', 'jfif', 'png', 'gif', 'webp', 'tif', 'tiff', 'bmp', 'dib', 'heic', 'heif', 'hif', 'avif', 'jxl', 'jp2', 'jpx', 'jpf', 'jpm', 'j2k', 'j2c', 'jpc', 'jph', 'ico', 'cur', 'svg', 'wmf', 'emf', 'pct', 'pict'] },
  { id: 'audio', label: 'audio', extensions: ['mp3', 'flac', 'ogg', 'oga', 'opus', 'wav', 'wave', 'aif', 'aiff', 'aifc', 'm4a', 'm4b', 'mka'] },
  { id: 'video', label: 'video', extensions: ['mp4', 'm4v', 'mov', 'qt', 'mkv', 'mk3d', 'webm', 'avi'] },
  { id: 'archives', label: 'archives', extensions: ['zip', 'tar', 'gz', 'tgz', 'bz2', 'tbz', 'tbz2', 'xz', 'txz', '7z', 'rar'] },
  { id: 'email', label: 'e-mail', extensions: ['eml', 'msg', 'tnef', 'dat'] },
  { id: 'calendars', label: 'calendars and contact cards', extensions: ['ics', 'ical', 'icalendar', 'ifb', 'vcf', 'vcard'] },
  { id: 'ebooks', label: 'e-books', extensions: ['epub'] },
  { id: 'text', label: 'text files', extensions: ['txt', 'text', 'log', 'md', 'markdown', 'mkd', 'mdown', 'rst', 'ini', 'cfg', 'conf', 'yaml', 'yml', 'toml', 'json', 'xml', 'html', 'htm', 'xhtml', 'srt', 'vtt'] },
];

export interface AcceptedFamily {
  id: string;
  label: string;
  /** The family's extensions the server accepts, with their dot ('.pdf'). */
  extensions: string[];
}

/** The kinds the server accepts, from its extensions ('.pdf'); extensions no kind knows come
 * last as "other formats". */
export function acceptedFamilies(extensions: readonly string[]): AcceptedFamily[] {
  const accepted = new Set(extensions.map((e) => e.toLowerCase()));
  const placed = new Set<string>();
  const out: AcceptedFamily[] = [];
  for (const family of FORMAT_FAMILIES) {
    const mine = family.extensions.map((e) => `.${e}`).filter((e) => accepted.has(e));
    mine.forEach((e) => placed.add(e));
    if (mine.length) out.push({ id: family.id, label: family.label, extensions: mine });
  }
  const other = [...accepted].filter((e) => !placed.has(e));
  if (other.length) out.push({ id: 'other', label: `other formats (${other.join(', ')})`, extensions: other });
  return out;
}

/** "a, b and c". */
export function listInWords(items: readonly string[]): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

/** The name's extension ('.exe'), lowercase, or '' for a name without one. */
export function extensionOf(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? '';
  const dot = base.lastIndexOf('.');
  return dot > 0 && dot < base.length - 1 ? base.slice(dot).toLowerCase() : '';
}

/** The refused names the server announces (`refusedFormats`), extension ('.exe') to reason. */
export function refusedReasons(info: Pick<UploadInfo, 'refusedFormats'> | undefined | null): Map<string, string> {
  const out = new Map<string, string>();
  for (const group of info?.refusedFormats ?? []) {
    for (const ext of group.extensions) out.set(`.${ext.replace(/^\.+/, '').toLowerCase()}`, group.reason);
  }
  return out;
}

/** 'File type must be ...' (the SPEC's opening) naming the accepted kinds, then why this file's
 * type is not one of them: the server's own reason for a name it refuses, else its extension. */
export function typeRefusal(name: string, extensions: readonly string[], refused: ReadonlyMap<string, string> = new Map()): string {
  const kinds = acceptedFamilies(extensions).map((f) => f.label);
  const opening = kinds.length > 1 ? `File type must be one of the supported kinds: ${listInWords(kinds)}.`
    : `File type must be ${extensions.length > 1 ? `one of ${extensions.join(', ')}` : extensions[0] ?? 'a supported type'}.`;
  const ext = extensionOf(name);
  const reason = ext ? refused.get(ext) : undefined;
  if (reason) return `${opening} ${reason.replace(/\.?$/, '')} (${ext}).`;
  return ext ? `${opening} ${ext} files are not among them.` : `${opening} This file’s name has no extension.`;
}

/** "104857600 bytes (100 MB)"; below a kilobyte the bytes alone. */
export const bytesInWords = (bytes: number) => (bytes < 1024 ? `${bytes} bytes` : `${bytes} bytes (${formatBytes(bytes)})`);

/** One refused file's reasons, each in words: the SPEC's openings kept ('File is larger than N
 * bytes', 'Too many files'), the size in MB beside the bytes and the file's own size. */
export function refusalText(rejection: FileRejection, limits: { maxSize: number; maxFiles: number; extensions: readonly string[] },
  refused: ReadonlyMap<string, string>): string {
  const one = (e: FileError) => {
    switch (e.code) {
      case 'file-invalid-type': return typeRefusal(rejection.file.name, limits.extensions, refused);
      case 'file-too-large':
        return `File is larger than ${bytesInWords(limits.maxSize)}, the most your account allows per file; this one is ${formatBytes(rejection.file.size)}.`;
      case 'too-many-files': return `Too many files: up to ${limits.maxFiles} at once. Nothing from this drop was uploaded; drop fewer files.`;
      default: return e.message;
    }
  };
  return rejection.errors.map(one).join(' ');
}
