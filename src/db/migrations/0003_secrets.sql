-- Secrets: one row per shared secret and per personal override. Values, comments and reminder notes are
-- sealed with the project's data key (AAD = secrets/<column>/<row id>), so no plaintext reaches the database.
CREATE TABLE secrets (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  folder_id uuid NOT NULL REFERENCES folders(id) ON DELETE CASCADE,
  key text NOT NULL,
  type text NOT NULL DEFAULT 'shared' CHECK (type IN ('shared', 'personal')),
  -- Owner of a personal override; NULL for shared secrets.
  user_id uuid REFERENCES users(id) ON DELETE CASCADE,
  version int NOT NULL DEFAULT 1,
  encrypted_value bytea NOT NULL,
  encrypted_comment bytea,
  skip_multiline_encoding boolean NOT NULL DEFAULT false,
  encrypted_reminder_note bytea,
  reminder_repeat_days int,
  -- [{key, value?, encryptedValue?, isEncrypted}]: only entries flagged isEncrypted are sealed.
  metadata jsonb NOT NULL DEFAULT '[]',
  -- The last writer (Infisical's `actor` on a secret).
  actor_type text,
  actor_id uuid,
  actor_name text,
  actor_membership_id uuid,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((type = 'personal') = (user_id IS NOT NULL))
);
CREATE UNIQUE INDEX secrets_shared_key_uq ON secrets (folder_id, key) WHERE type = 'shared';
CREATE UNIQUE INDEX secrets_personal_key_uq ON secrets (folder_id, key, user_id) WHERE type = 'personal';
CREATE INDEX secrets_folder_key_idx ON secrets (folder_id, key);

-- Deleting a tag (or a secret) drops its links in the same statement.
CREATE TABLE secret_tag_links (
  secret_id uuid NOT NULL REFERENCES secrets(id) ON DELETE CASCADE,
  tag_id uuid NOT NULL REFERENCES secret_tags(id) ON DELETE CASCADE,
  PRIMARY KEY (secret_id, tag_id)
);
CREATE INDEX secret_tag_links_tag_idx ON secret_tag_links (tag_id);
