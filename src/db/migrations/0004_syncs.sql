-- App connections and secret syncs. Connection credentials are sealed with the ORGANISATION's data key
-- (keyring owner = org id, AAD = app_connections/encrypted_credentials/<row id>); they never leave the
-- server decrypted except to the destination itself.
CREATE TABLE app_connections (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  name text NOT NULL,
  description text,
  app text NOT NULL,
  method text NOT NULL,
  encrypted_credentials bytea NOT NULL,
  version int NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (org_id, name)
);

-- Infisical's secret_syncs columns, plus the ownership state the engine needs:
-- - owned_keys: destination keys this sync wrote in a successful run. Only these (and only while they
--   still match the key schema) may ever be deleted by the sync; everything else is foreign.
-- - key_fingerprints: for write-only destinations, destination key -> HMAC of what the last successful
--   run wrote (never the value), so unchanged keys are not re-written.
CREATE TABLE secret_syncs (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name text NOT NULL,
  description text,
  destination text NOT NULL,
  is_auto_sync_enabled boolean NOT NULL DEFAULT true,
  version int NOT NULL DEFAULT 1,
  destination_config jsonb NOT NULL,
  sync_options jsonb NOT NULL,
  project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  folder_id uuid REFERENCES folders(id) ON DELETE SET NULL,
  connection_id uuid NOT NULL REFERENCES app_connections(id) ON DELETE RESTRICT,
  -- Who created the sync ({type, id, orgId, name}): the actor initial-sync imports write as.
  created_by jsonb,
  sync_status text,
  last_sync_job_id text,
  last_sync_message text,
  last_synced_at timestamptz,
  import_status text,
  last_import_job_id text,
  last_import_message text,
  last_imported_at timestamptz,
  remove_status text,
  last_remove_job_id text,
  last_remove_message text,
  last_removed_at timestamptz,
  owned_keys jsonb NOT NULL DEFAULT '[]',
  key_fingerprints jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT secret_syncs_project_name_key UNIQUE (project_id, name)
);
CREATE INDEX secret_syncs_folder_idx ON secret_syncs (folder_id);
CREATE INDEX secret_syncs_connection_idx ON secret_syncs (connection_id);
