import { readDemoAccount } from './embed-harness.js';

/**
 * What the console's e2e files share (e2e/console*.test.ts): the demo account's platform users, the demo account
 * with a console password for its member, and an API call as a host's backend makes it.
 */

type DemoAccount = ReturnType<typeof readDemoAccount>;
interface DemoUser { email: string; role: string; password?: string }

const usersOf = (account: DemoAccount) => (account as unknown as { users: DemoUser[] }).users;

/** The demo's admin with a console password, and its member (who has none unless given one). */
export function demoUsers(account: DemoAccount = readDemoAccount()): { admin: DemoUser & { password: string }; member: DemoUser } {
  const users = usersOf(account);
  return {
    admin: users.find((u) => u.role === 'admin' && u.password !== undefined) as DemoUser & { password: string },
    member: users.find((u) => u.role === 'member')!,
  };
}

/** The demo account (or `account`, a demo account of embedAccountFor's), its member given the console password `password`. */
export function demoWithMemberPassword(password: string, account: DemoAccount = readDemoAccount()): DemoAccount {
  usersOf(account).find((u) => u.role === 'member')!.password = password;
  return account;
}

/** A call to svc's API with `key`, as a host's backend makes it: the status, and the JSON body (if any). */
export async function callApi(origin: string, key: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${origin}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  return { status: response.status, body: (text === '' ? undefined : JSON.parse(text)) as Record<string, unknown> | undefined };
}
