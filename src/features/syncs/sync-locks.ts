import type { DbHandle } from "../../db/client.js";

/**
 * "Only one run per sync" and "at most N runs per connection", also across instances.
 *
 * PostgreSQL: session advisory locks held on a dedicated pool connection for the length of the run. A
 * process that dies drops its connection and with it its locks, so nothing stays locked after a crash
 * (unlike Infisical's Redis mutex with a guessed TTL). Connection slots are N numbered locks; a run takes
 * the first free one.
 * PGlite: one process owns the database, so in-process sets are the whole truth.
 */
export interface RunLease {
  release(): Promise<void>;
}

export interface SyncLocks {
  /** Undefined when the sync is already running or the connection has no free slot. */
  acquire(syncId: string, connectionId: string): Promise<RunLease | "sync-busy" | "connection-busy">;
  isRunning(syncId: string): Promise<boolean>;
}

const syncKey = (id: string) => `ferry-sync:${id}`;
const slotKey = (id: string, slot: number) => `ferry-conn:${id}:${slot}`;

export function createSyncLocks(dbh: DbHandle, perConnection: number): SyncLocks {
  const running = new Set<string>();
  const perConn = new Map<string, number>();

  if (dbh.kind === "pglite" || !dbh.pool) {
    return {
      async acquire(syncId, connectionId) {
        if (running.has(syncId)) return "sync-busy";
        const n = perConn.get(connectionId) ?? 0;
        if (n >= perConnection) return "connection-busy";
        running.add(syncId);
        perConn.set(connectionId, n + 1);
        return {
          async release() {
            running.delete(syncId);
            perConn.set(connectionId, (perConn.get(connectionId) ?? 1) - 1);
          },
        };
      },
      async isRunning(syncId) {
        return running.has(syncId);
      },
    };
  }

  const pool = dbh.pool;
  return {
    async acquire(syncId, connectionId) {
      const client = await pool.connect();
      const tryLock = async (k: string) =>
        (await client.query<{ ok: boolean }>("SELECT pg_try_advisory_lock(hashtext($1)) AS ok", [k])).rows[0]
          ?.ok === true;
      try {
        if (!(await tryLock(syncKey(syncId)))) {
          client.release();
          return "sync-busy";
        }
        let slot = -1;
        for (let i = 0; i < perConnection && slot < 0; i++)
          if (await tryLock(slotKey(connectionId, i))) slot = i;
        if (slot < 0) {
          await client.query("SELECT pg_advisory_unlock_all()");
          client.release();
          return "connection-busy";
        }
      } catch (err) {
        client.release(true);
        throw err;
      }
      return {
        async release() {
          try {
            await client.query("SELECT pg_advisory_unlock_all()");
            client.release();
          } catch {
            // Dropping the connection releases its session locks anyway.
            client.release(true);
          }
        },
      };
    },
    async isRunning(syncId) {
      const { rows } = await pool.query<{ locked: boolean }>(
        `SELECT CASE WHEN pg_try_advisory_lock(hashtext($1)) THEN NOT pg_advisory_unlock(hashtext($1)) ELSE true END AS locked`,
        [syncKey(syncId)],
      );
      return rows[0]?.locked === true;
    },
  };
}
