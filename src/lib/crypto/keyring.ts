import { eq } from "drizzle-orm";
import type { Executor } from "../../db/client.js";
import { encryptionKeys } from "../../db/schema/index.js";
import { type Aad, newDataKey, open, seal } from "./envelope.js";

/**
 * The only place where keys and ciphertext meet. The root key wraps one data key per owner (a project,
 * or an organisation for app-connection credentials). Unwrapped data keys are cached in memory, so a
 * hot read costs one AES-GCM operation and no extra query.
 */
export interface Keyring {
  /** Creates the owner's data key inside `tx` (call when the owner row is created). */
  createKey(ownerId: string, tx: Executor): Promise<void>;
  encrypt(ownerId: string, plaintext: string, aad: Aad, tx?: Executor): Promise<Buffer>;
  decrypt(ownerId: string, sealed: Buffer, aad: Aad, tx?: Executor): Promise<string>;
  /** Synchronous variants once `key(ownerId)` has been awaited, for loops over many rows. */
  key(ownerId: string, tx?: Executor): Promise<Buffer>;
  /** The owner's data key if it is already unwrapped in memory (no promise); else call `key`. */
  cachedKey(ownerId: string): Buffer | undefined;
  /** Re-wraps every data key under the current root key (root-key rotation); returns the count. */
  rewrapAll(tx: Executor): Promise<number>;
  forget(ownerId: string): void;
}

const keyAad = (ownerId: string): Aad => ({ table: "encryption_keys", column: "encrypted_key", id: ownerId });

/**
 * `rootKey` wraps new data keys. During a rotation `previousRootKeys` are still accepted for unwrapping
 * (trial decryption is safe: AES-GCM authentication fails on the wrong key), so instances restarted with
 * the new key keep serving while `npm run rotate-root-key` re-wraps every data key.
 */
export function createKeyring(rootKey: Buffer, db: Executor, previousRootKeys: Buffer[] = []): Keyring {
  const cache = new Map<string, Buffer>();
  const unwrap = (sealed: Buffer, ownerId: string): Buffer => {
    let firstError: unknown;
    for (const k of [rootKey, ...previousRootKeys]) {
      try {
        return open(k, sealed, keyAad(ownerId));
      } catch (err) {
        firstError ??= err;
      }
    }
    throw firstError;
  };

  async function key(ownerId: string, tx?: Executor): Promise<Buffer> {
    const hit = cache.get(ownerId);
    if (hit) return hit;
    const ex = tx ?? db;
    let [row] = await ex.select().from(encryptionKeys).where(eq(encryptionKeys.ownerId, ownerId));
    if (!row) {
      // Owners created before they needed a key (or by another instance racing us) get one lazily.
      await ex
        .insert(encryptionKeys)
        .values({ ownerId, encryptedKey: seal(rootKey, newDataKey(), keyAad(ownerId)) })
        .onConflictDoNothing();
      [row] = await ex.select().from(encryptionKeys).where(eq(encryptionKeys.ownerId, ownerId));
    }
    if (!row) throw new Error("data key vanished");
    const dk = unwrap(row.encryptedKey, ownerId);
    cache.set(ownerId, dk);
    return dk;
  }

  return {
    async createKey(ownerId, tx) {
      const dk = newDataKey();
      await tx.insert(encryptionKeys).values({ ownerId, encryptedKey: seal(rootKey, dk, keyAad(ownerId)) });
    },
    async encrypt(ownerId, plaintext, aad, tx) {
      return seal(await key(ownerId, tx), plaintext, aad);
    },
    async decrypt(ownerId, sealed, aad, tx) {
      return open(await key(ownerId, tx), sealed, aad).toString("utf8");
    },
    key,
    cachedKey: (ownerId) => cache.get(ownerId),
    async rewrapAll(tx) {
      const rows = await tx.select().from(encryptionKeys);
      for (const r of rows) {
        const dk = unwrap(r.encryptedKey, r.ownerId);
        await tx
          .update(encryptionKeys)
          .set({ encryptedKey: seal(rootKey, dk, keyAad(r.ownerId)) })
          .where(eq(encryptionKeys.ownerId, r.ownerId));
      }
      return rows.length;
    },
    forget(ownerId) {
      cache.delete(ownerId);
    },
  };
}
