import { useQuery } from '@tanstack/react-query';
import { get, put } from '../../lib/api-client';
import type { User } from '../../lib/types';

export const fetchProfile = async () => (await get<User>('/api/auth/profile')).data;
export const useProfile = () => useQuery({ queryKey: ['profile'], queryFn: fetchProfile, staleTime: 0 });
export const changePassword = (currentPassword: string, newPassword: string) =>
  put<null>('/api/auth/password', { currentPassword, newPassword });
