-- Data plane (environments, folders, tags, secret imports). Environments and folders live in
-- 0001_foundation.sql; this file adds project tags and folder imports. Secrets tables reference
-- secret_tags(id) and folders(id) with ON DELETE CASCADE, so this file sorts before theirs.
CREATE TABLE secret_tags (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  slug text NOT NULL,
  color text,
  created_by uuid,
  created_by_actor_type text NOT NULL DEFAULT 'user',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (project_id, slug)
);

-- A folder imports the secrets of (import_env, import_path). The source is kept as an environment and a
-- path, not a folder id, because Infisical lets a folder import a path that does not exist yet.
-- Positions are 1..n per folder; the unique check is deferred so a reorder can shift rows in one UPDATE.
CREATE TABLE secret_imports (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  folder_id uuid NOT NULL REFERENCES folders(id) ON DELETE CASCADE,
  import_env uuid NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
  import_path text NOT NULL,
  position int NOT NULL,
  version int NOT NULL DEFAULT 1,
  is_replication boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT secret_imports_position_key UNIQUE (folder_id, position) DEFERRABLE INITIALLY DEFERRED
);
-- "Who imports this folder?" (change propagation, cycle checks) is a lookup by source.
CREATE INDEX secret_imports_source_idx ON secret_imports (import_env, import_path);
