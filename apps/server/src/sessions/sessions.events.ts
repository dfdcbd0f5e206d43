import type { Kysely } from 'kysely';
import type { AfterCommit } from '../core/core.events.js';
import type { Database } from '../db/db.schema.js';

/**
 * Why sessions were revoked: one session by id, a viewer's logout, their embed user deleted, or their embed tenant
 * renamed (the tokens carry its old name) or deleted.
 */
export type RevocationReason = 'revoked' | 'logout' | 'embed_user_deleted' | 'embed_tenant_renamed' | 'embed_tenant_deleted';

/**
 * The events sessions publish (docs/webhooks.md "Events" says what a webhook endpoint is sent of each). A subscriber
 * that writes does so with `transaction`, inside the change's transaction, and hands what must wait for the commit
 * to `afterCommit`.
 */
export interface SessionEvents {
  /**
   * Sessions of one viewer were revoked together: of an embed user (`externalId` sessions) or of a platform user
   * (`internalId` sessions, `userId`).
   */
  'embed_session.revoked': {
    transaction: Kysely<Database>;
    afterCommit: AfterCommit;
    accountId: number;
    /** When, by the service's clock. */
    at: Date;
    reason: RevocationReason;
    embedTenantId: number | null;
    embedUserId: number | null;
    userId: number | null;
    /** How many sessions. */
    sessions: number;
    /**
     * The viewer's tenant name and external id, read before the change when it removes them (their embed user
     * deleted); otherwise a subscriber that needs them reads them with `transaction`.
     */
    viewer?: { tenantName: string | null; externalId: string | null };
  };
}
