import pino from "pino";
import { ConfigError, loadConfig } from "../config.js";
import { createDb } from "../db/client.js";
import { createKeyring } from "../lib/crypto/keyring.js";

/**
 * Root-key rotation without downtime:
 * 1. Restart instances one by one with ENCRYPTION_KEY=<new> and ENCRYPTION_KEY_PREVIOUS=<old>: they wrap
 *    new data keys with the new key and still unwrap old ones.
 * 2. Run `npm run rotate-root-key` (same environment): every data key is re-wrapped under the new key in
 *    one transaction. Secret values are not touched: only the small wrapped data keys change.
 * 3. Remove ENCRYPTION_KEY_PREVIOUS at the next restart.
 */
async function main() {
  const config = loadConfig();
  if (!config.ENCRYPTION_KEY_PREVIOUS) {
    throw new ConfigError(
      "Set ENCRYPTION_KEY to the new root key and ENCRYPTION_KEY_PREVIOUS to the old one",
    );
  }
  if (config.generated.includes("ENCRYPTION_KEY"))
    throw new ConfigError("ENCRYPTION_KEY must be set explicitly");
  const log = pino({ level: "warn" });
  const dbh = await createDb({ url: config.DATABASE_URL, dataDir: config.DATA_DIR, log });
  try {
    const keyring = createKeyring(config.ENCRYPTION_KEY, dbh.db, [config.ENCRYPTION_KEY_PREVIOUS]);
    const n = await dbh.db.transaction((tx) => keyring.rewrapAll(tx));
    console.log(`re-wrapped ${n} data keys under the new root key`);
  } finally {
    await dbh.close();
  }
}

main().catch((err: unknown) => {
  console.error(`rotate-root-key: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
