/** The signed-in person and the active workspace (from /api/me), and what their role may see. */
import { useQuery } from '@tanstack/react-query';
import { api } from './api';

export function useMe() {
  return useQuery({ queryKey: ['me'], queryFn: api.me });
}

export function useCan(): (permission: string) => boolean {
  const { data } = useMe();
  return (permission) => Boolean(data?.workspace?.permissions.includes(permission));
}
