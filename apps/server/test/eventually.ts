/**
 * Polls `check` every 10 ms until it holds or `ms` pass; resolves to whether it held. For what the database
 * delivers asynchronously (PostgreSQL notifications), never for sleeping past races in svc's own code.
 */
export async function eventually(check: () => Promise<boolean> | boolean, ms = 3000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return check();
}
