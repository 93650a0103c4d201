/**
 * Storage for the authorization server library (oidc-provider's adapter interface) in Postgres: one table,
 * `oauth_artifacts`, keyed by (kind, SHA-256 of the id). An opaque token's id is the token itself, so only its hash is
 * stored: a database reader gets no usable token. The library decides what the artefacts mean; we only keep them,
 * expire them and find them by grant, uid or user code.
 */
import crypto from 'node:crypto';
import type { Db } from '../db/knex.js';

/** The stored key of an artefact id (tokens, codes, grants, sessions alike). */
export function artifactKey(id: string): string {
  return crypto.createHash('sha256').update(id).digest('base64url');
}

export interface AdapterPayload {
  grantId?: string;
  uid?: string;
  userCode?: string;
  consumed?: unknown;
  [key: string]: unknown;
}

/** Artefacts whose id is a bearer secret, always looked up by that id. */
const BEARER_KINDS = new Set(['AccessToken', 'RefreshToken', 'AuthorizationCode', 'ClientCredentials', 'DeviceCode', 'BackchannelAuthenticationRequest']);

/** Builds the adapter class the library instantiates once per artefact kind (AccessToken, Grant, Session, ...). */
export function postgresAdapter(db: Db) {
  return class PostgresAdapter {
    constructor(readonly kind: string) {}

    async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
      // A token's payload repeats its value as `jti`: kept out of storage and put back from the id on `find`.
      const stored = BEARER_KINDS.has(this.kind) ? { ...payload, jti: undefined } : payload;
      const row = {
        kind: this.kind, id: artifactKey(id), payload: JSON.stringify(stored), grant_id: payload.grantId ?? null, uid: payload.uid ?? null, user_code: payload.userCode ?? null,
        expires_at: expiresIn ? new Date(Date.now() + expiresIn * 1000) : null,
      };
      await db('oauth_artifacts').insert(row).onConflict(['kind', 'id']).merge();
    }

    private async findWhere(where: Record<string, string>): Promise<AdapterPayload | undefined> {
      const row = await db('oauth_artifacts').where({ kind: this.kind, ...where })
        .andWhere((q) => q.whereNull('expires_at').orWhere('expires_at', '>', new Date())).first('payload', 'consumed_at');
      if (!row) return undefined;
      return { ...row.payload, ...(row.consumed_at ? { consumed: Math.floor(row.consumed_at.getTime() / 1000) } : {}) };
    }

    async find(id: string) {
      const found = await this.findWhere({ id: artifactKey(id) });
      return found && BEARER_KINDS.has(this.kind) ? { ...found, jti: id } : found;
    }

    findByUid(uid: string) {
      return this.findWhere({ uid });
    }

    findByUserCode(userCode: string) {
      return this.findWhere({ user_code: userCode });
    }

    async consume(id: string): Promise<void> {
      await db('oauth_artifacts').where({ kind: this.kind, id: artifactKey(id) }).update({ consumed_at: new Date() });
    }

    async destroy(id: string): Promise<void> {
      await db('oauth_artifacts').where({ kind: this.kind, id: artifactKey(id) }).delete();
    }

    /** Every artefact of a grant, of any kind: revoking a grant ends its tokens and codes. */
    async revokeByGrantId(grantId: string): Promise<void> {
      await db('oauth_artifacts').where({ grant_id: grantId }).delete();
    }
  };
}

/** Removes expired artefacts; called now and then so the table does not grow without bound. */
export async function purgeExpiredArtifacts(db: Db, now: Date): Promise<number> {
  return db('oauth_artifacts').where('expires_at', '<=', now).delete();
}
