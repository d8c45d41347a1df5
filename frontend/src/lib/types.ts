/** Shapes of SPEC section 3, as the API sends them (camelCase). */
export type Role = 'GUEST' | 'USER' | 'ENTERPRISE' | 'ADMIN';
export type FileStatus = 'PENDING' | 'PROCESSING' | 'COMPLETED' | 'FAILED';

export interface User {
  id: string;
  email: string;
  username?: string | null;
  firstName?: string | null;
  lastName?: string | null;
  role: Role | string;
  isActive?: boolean;
  isEmailVerified?: boolean;
  lastLogin?: string | null;
  createdAt?: string;
  updatedAt?: string;
  fileCount?: number;
  sessionCount?: number;
}

export interface Tokens {
  accessToken: string;
  refreshToken: string;
  expiresIn: number;
}

export interface AuthPayload {
  user: User;
  tokens: Tokens;
}

export interface Envelope<T> {
  success: boolean;
  message: string;
  data: T;
}

export interface Pagination {
  page: number;
  limit: number;
  total: number;
  pages: number;
  hasPrev: boolean;
  hasNext: boolean;
}

export interface UploadInfo {
  maxFiles: number;
  maxFileSize: number;
  maxFileSizeMB: number;
  supportedFormats: string[];
  modes?: string[];
}

export interface UploadResultItem {
  fileId: string;
  originalName: string;
  size: number;
  status: FileStatus | string;
}

export interface Finding {
  kind: string;
  location?: string | null;
  action: string;
  detail?: string | null;
}

export interface FileReport {
  findings?: Finding[];
  [key: string]: unknown;
}

export interface FileRecord {
  id: string;
  originalName: string;
  originalSize: number;
  sanitizedName?: string | null;
  sanitizedSize?: number | null;
  status: FileStatus | string;
  mode?: string | null;
  mimeType?: string | null;
  createdAt: string;
  processingStartedAt?: string | null;
  processingCompletedAt?: string | null;
  processingDuration?: number | null;
  errorMessage?: string | null;
  expiresAt?: string | null;
  downloadCount?: number;
  compressionRatio?: number | null;
  isExpired?: boolean;
  report?: FileReport | null;
}

export interface Job {
  state?: string;
  progress?: number | null;
  [key: string]: unknown;
}

export interface FileStatusData {
  file: FileRecord;
  job: Job | null;
}

export interface FileStats {
  total: number;
  completed: number;
  processing: number;
  pending: number;
  failed: number;
}

export interface FileHistory {
  files: FileRecord[];
  stats: FileStats;
  pagination: Pagination;
}

export interface UsageStats {
  user: { role: string; memberSince: string };
  currentPeriod: { uploadsUsed: number; uploadQuota: number; quotaUtilization: number; start: string };
  limits: { isOverQuota: boolean; isNearQuota: boolean; daysUntilReset: number };
  overall: { totalFiles: number; totalStorageUsed: number; storageQuota: number; storageUtilization: number };
}

export interface UsageHistoryItem {
  month: string;
  uploads: number;
  successful: number;
  totalSize: number;
}

export interface AdminAnalytics {
  period: { start: string; end: string };
  users: { total: number; active: number; byRole: Record<string, number> };
  files: { total: number; recent: number; byStatus: Record<string, number> };
  storage: { totalUsed: number; averageFileSize: number };
}

export interface UserList {
  users: User[];
  pagination: Pagination;
}
