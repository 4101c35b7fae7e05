import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { AppError } from "../errors.js";

/**
 * Envelope encryption with AES-256-GCM.
 *
 * - The root key (ENCRYPTION_KEY) only wraps data keys; one random data key per project (and one for
 *   organisation-level material such as app-connection credentials).
 * - Every ciphertext carries associated data naming its table, column and row id, so a ciphertext copied
 *   into another row or column fails authentication instead of decrypting to the wrong secret.
 * - Layout: version byte (1) | 12-byte random IV | 16-byte tag | ciphertext.
 */
const VERSION = 1;
const IV_LEN = 12;
const TAG_LEN = 16;

export type Aad = { table: string; column: string; id: string };
const aadBytes = (a: Aad) => Buffer.from(`ferry:v1:${a.table}:${a.column}:${a.id}`, "utf8");

export function seal(key: Buffer, plaintext: Buffer | string, aad: Aad): Buffer {
  const iv = randomBytes(IV_LEN);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(aadBytes(aad));
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([Buffer.from([VERSION]), iv, cipher.getAuthTag(), body]);
}

export function open(key: Buffer, sealed: Buffer, aad: Aad): Buffer {
  if (sealed.length < 1 + IV_LEN + TAG_LEN || sealed[0] !== VERSION) {
    throw new AppError("INTERNAL", "Stored ciphertext is corrupt", { name: "CryptographyError" });
  }
  const iv = sealed.subarray(1, 1 + IV_LEN);
  const tag = sealed.subarray(1 + IV_LEN, 1 + IV_LEN + TAG_LEN);
  const decipher = createDecipheriv("aes-256-gcm", key, iv);
  decipher.setAAD(aadBytes(aad));
  decipher.setAuthTag(tag);
  try {
    return Buffer.concat([decipher.update(sealed.subarray(1 + IV_LEN + TAG_LEN)), decipher.final()]);
  } catch (cause) {
    throw new AppError("INTERNAL", "Stored ciphertext failed authentication", {
      name: "CryptographyError",
      cause,
    });
  }
}

export const newDataKey = () => randomBytes(32);
