-- Audit records get time-ordered ids (the UUIDv7 layout: 48 bits of Unix time in milliseconds, the
-- version nibble 7, then gen_random_uuid()'s random bits and variant), so every insert lands at the
-- right-hand end of audit_logs_pkey instead of on a random leaf page. The audit log only grows (every
-- read and write adds a row), and with random ids each insert dirtied a different leaf: after each
-- checkpoint that cost a full-page image in the WAL (a v4 delete wrote ~1.85 KB of WAL instead of
-- ~1.0 KB against a 400,000-row log, see bench/NOTES.md), and once the index outgrows shared_buffers
-- it costs a random read. Existing rows keep their ids; ids stay unique (74 random bits per ms).
ALTER TABLE audit_logs ALTER COLUMN id SET DEFAULT encode(
  set_bit(
    set_bit(
      overlay(
        uuid_send(gen_random_uuid())
        PLACING substring(int8send((extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3)
        FROM 1 FOR 6
      ),
      52, 1
    ),
    53, 1
  ),
  'hex'
)::uuid;
