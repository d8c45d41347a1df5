import { queryOptions, useQuery } from '@tanstack/react-query';
import { api } from '../../lib/api';

export const profileKeys = { detail: ['profile'] as const };

export const fetchProfile = async () => (await api('get', '/api/auth/profile')).data;
export const profileQuery = () => queryOptions({ queryKey: profileKeys.detail, queryFn: fetchProfile, staleTime: 0 });
export const useProfile = () => useQuery(profileQuery());

export const changePassword = (currentPassword: string, newPassword: string) =>
  api('put', '/api/auth/password', { body: { currentPassword, newPassword } });
